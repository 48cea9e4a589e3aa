# slurm/lib/job-env.sh: sourced by the job scripts (slurm/*.sbatch) once they know the repository
# (OVB_ROOT). Loads the site configuration - $OVB_SITE_CONFIG, else slurm/site.sh if present (see
# slurm/site.sh.example) - sets OVB_SUITE to the driver's command and prints a header, so every job
# log says where and how it ran. Not meant to be run by itself.
# shellcheck shell=bash disable=SC2034

ovb_die() { echo "${OVB_JOB_NAME:-ovb-job}: error: $*" >&2; exit 2; }

[ -f "$OVB_ROOT/slurm/ovb-suite" ] ||
  ovb_die "cannot find the OverlapBench repository (looked in '$OVB_ROOT'): set OVB_ROOT"

if [ -n "${OVB_SITE_CONFIG:-}" ]; then
  [ -r "$OVB_SITE_CONFIG" ] || ovb_die "OVB_SITE_CONFIG=$OVB_SITE_CONFIG cannot be read"
  ovb_site=$OVB_SITE_CONFIG
elif [ -r "$OVB_ROOT/slurm/site.sh" ]; then
  ovb_site=$OVB_ROOT/slurm/site.sh
else
  ovb_site=""
fi
if [ -n "$ovb_site" ]; then
  # Site files load modules, which often read unset variables.
  set +u
  # shellcheck source=slurm/site.sh.example
  source "$ovb_site"
  set -u
fi
export OVB_ROOT
OVB_SUITE=("${OVB_DRIVER_PYTHON:-python3}" "$OVB_ROOT/slurm/ovb-suite")

echo "==== ${OVB_JOB_NAME:-ovb-job}: job ${SLURM_JOB_ID:-none} (restart ${SLURM_RESTART_COUNT:-0})" \
  "on ${SLURM_JOB_NODELIST:-$(hostname)}, ${SLURM_NTASKS:-?} tasks, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "==== repository $OVB_ROOT, site configuration ${ovb_site:-none}"
