# ci/lib/apt.sh: sourced by ci/setup.sh. apt_get ARGS... runs `$sudo apt-get ARGS...` and, while
# another apt-get or dpkg holds the package lock (an unattended upgrade, another helper's set-up),
# waits for it - bounded by OVB_APT_LOCK_WAIT_S seconds (default 600), with one message - instead
# of failing at once. Any other failure, or the lock still held at the deadline, returns apt-get's
# status with its output on stderr.
# shellcheck shell=bash

APT_LOCK_RE="could not get lock|unable to acquire the dpkg frontend lock|is another process using it|unable to lock"

apt_get() {
  local wait_s=${OVB_APT_LOCK_WAIT_S:-600} poll_s=${OVB_APT_LOCK_POLL_S:-5}
  local deadline out rc said=0
  case "$wait_s" in '' | *[!0-9]*)
    echo "ci/setup.sh: error: OVB_APT_LOCK_WAIT_S='$wait_s': expected whole seconds" >&2
    return 2 ;;
  esac
  deadline=$(($(date +%s) + wait_s))
  while :; do
    # DPkg::Lock::Timeout makes apt itself wait for the dpkg lock (apt >= 1.9.11); the loop also
    # covers the lists lock of `apt-get update` and older apt.
    out=$(${sudo:-} apt-get -o DPkg::Lock::Timeout="$poll_s" "$@" 2>&1) && return 0
    rc=$?
    if grep -qiE "$APT_LOCK_RE" <<<"$out" && [ "$(date +%s)" -lt "$deadline" ]; then
      if [ "$said" = 0 ]; then
        echo "ci/setup.sh: another apt-get/dpkg holds the package lock: waiting for it (at most" \
          "${wait_s} s, OVB_APT_LOCK_WAIT_S)" >&2
        said=1
      fi
      sleep "$poll_s"
      continue
    fi
    printf '%s\n' "$out" >&2
    if grep -qiE "$APT_LOCK_RE" <<<"$out"; then
      echo "ci/setup.sh: error: the package lock was still held after ${wait_s} s" >&2
    fi
    return "$rc"
  done
}
