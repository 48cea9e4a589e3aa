# shellcheck shell=bash
# slurm/lib/pack.sh: the results folder of a one-call GPU script as one archive, for a machine that
# gives back only a few files of a call. Sourced. With OVB_PACK=ARCHIVE (a .tgz path) set,
# pack_start DIR archives DIR into ARCHIVE now, every OVB_PACK_EVERY_S seconds (30) while the
# script runs, and once more when it exits (pack_stop, from the caller's EXIT trap, or the trap
# pack_start sets when the caller has none); each archive is renamed into place whole, so a call
# cut off at any point leaves a whole archive of what was there a moment earlier. ARCHIVE may lie
# inside DIR (it is left out of itself). Without OVB_PACK: nothing.
pack_dir="" pack_loop=""
pack_now() {
  [ -n "${OVB_PACK:-}" ] && [ -n "$pack_dir" ] || return 0
  # Written outside the folder (a file growing inside it would change it under tar), then copied
  # beside ARCHIVE and renamed into place. tar's status 1 (a file changed while it was read: the
  # steps keep writing) still leaves a whole archive.
  local tmp part="$OVB_PACK.part.$$" rc=0
  tmp=$(mktemp "${TMPDIR:-/tmp}/ovb-pack.XXXXXX") || return 0
  tar czf "$tmp" --exclude="./$(basename "$OVB_PACK")" --exclude="./$(basename "$part")" \
    -C "$pack_dir" . 2>/dev/null || rc=$?
  if [ "$rc" -le 1 ] && cp "$tmp" "$part" 2>/dev/null; then
    mv -f "$part" "$OVB_PACK"
  else
    rm -f "$part"
  fi
  rm -f "$tmp"
  return 0
}
pack_start() {  # DIR [own-trap]: with "own-trap", the caller calls pack_stop from its EXIT trap
  [ -n "${OVB_PACK:-}" ] || return 0
  pack_dir=$1
  mkdir -p "$(dirname "$OVB_PACK")" 2>/dev/null || true
  pack_now
  # The loop ends with the script ($$ is the script's process in the subshell too) and holds none
  # of its output streams open.
  ( while sleep "${OVB_PACK_EVERY_S:-30}"; do
      kill -0 $$ 2>/dev/null || exit 0
      pack_now
    done ) </dev/null >/dev/null 2>&1 &
  pack_loop=$!
  [ "${2:-}" = own-trap ] || trap pack_stop EXIT
}
pack_stop() {
  if [ -n "$pack_loop" ]; then kill "$pack_loop" 2>/dev/null; fi
  pack_loop=""
  pack_now
}
