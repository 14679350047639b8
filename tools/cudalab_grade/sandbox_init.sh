# The first program of a cudalab sandbox (tools/cudalab_grade/sandbox.py writes
# its command line; read that module's docstring first).
#
#   sh sandbox_init.sh [--root DIR [MOUNT]...] [--chdir DIR] [--uid N | --nocaps] -- COMMAND [ARG]...
#
# 1. With --root (the "unshare" kind: this shell is root and PID 1 of fresh
#    mount, PID, network, IPC, UTS and cgroup namespaces): mounts a tmpfs on
#    DIR, builds the sandbox's tree there from the MOUNT options, in order,
#    makes it the root (pivot_root), detaches the host's tree and makes the
#    root read-only. MOUNT options (DST: a path inside the sandbox):
#      --ro SRC DST       bind SRC read-only, its submounts too
#      --rw SRC DST       bind SRC writable
#      --dev SRC DST      bind a device node, or a folder of them
#      --link TARGET DST  a symbolic link
#      --mask DST         hide DST (a file: /dev/null on it; a folder: an empty tmpfs)
#      --tmpfs DST SIZE   an empty tmpfs of SIZE bytes, mode 1777
#      --devfs DST        a minimal /dev: null, zero, full, random, urandom, tty
#      --proc DST         the PID namespace's /proc (sys, sysrq-trigger, irq, bus read-only)
#      --sysfs DST        a read-only sysfs (of the network namespace)
#    Then goes to the same folder as before if the sandbox shows it, else /tmp.
# 2. Goes to --chdir DIR.
# 3. Keeps only the allowed environment variables (the list below), with
#    HOME=/tmp and TMPDIR=/tmp.
# 4. Runs COMMAND through setpriv (util-linux) with no new privileges and, with
#    --uid N, as user and group N without any capability; with --nocaps, as the
#    same user without any capability. Without --root this shell is replaced
#    (bwrap's own init is PID 1 there); with --root it stays PID 1 and waits, so
#    that when COMMAND ends, this shell exits and the kernel kills every process
#    left in the PID namespace. The exit status is COMMAND's (128 + N for signal
#    N); 125 when the sandbox could not be built.
#
# POSIX sh (dash); util-linux mount, findmnt, pivot_root, setpriv. Every step
# that fails stops it (exit 125): nothing is run in a half-built sandbox.

path_in=${PATH-}
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH
unset LD_PRELOAD LD_AUDIT  # never into the tools below, nor into the sandbox
umask 022                  # the folders made for mount points must be open to the sandbox's user

fail() {
  echo "cudalab-sandbox: $*" >&2
  exit 125
}

run() {
  "$@" || fail "failed: $*"
}

root=
chdir=
drop=
old=$PWD
read -r _ _ range < /proc/self/uid_map
userns=
[ "$range" = 4294967295 ] || userns=1  # root of a user namespace, not of the machine

bind() {  # SRC DST ro|rw|dev
  dst=$root$2
  case $3 in
    ro) add=ro,nosuid,nodev ;;
    rw) add=nosuid,nodev ;;
    *) add=nosuid ;;
  esac
  if [ ! -d "$1" ]; then
    [ -d "${dst%/*}" ] || run mkdir -p "${dst%/*}"
    [ -e "$dst" ] || { : > "$dst"; } 2>/dev/null || fail "cannot make $dst"
    if [ -z "$userns" ]; then
      run mount --bind -o "$add" "$1" "$dst"
      return
    fi
    run mount --bind "$1" "$dst"
  else
    [ -d "$dst" ] || run mkdir -p "$dst"
    run mount --rbind "$1" "$dst"
  fi
  # Every mount now at or under DST (a folder's submounts too: /usr/local/nvidia
  # may be one) keeps the flags it has (a user namespace may not clear its
  # parent's nosuid, nodev, noexec or atime flags) and gets ADD.
  mounts=$(findmnt -rn -o TARGET,VFS-OPTIONS -R "$dst") || fail "findmnt $dst"
  while read -r target opts; do
    run mount -o "remount,bind,$opts,$add" "$target"
  done <<EOF
$mounts
EOF
}

while [ $# -gt 0 ]; do
  arg=$1
  shift
  case $arg in
    --) break ;;
    --root)
      root=$1; shift
      run mount -t tmpfs -o mode=0755,nosuid,nodev cudalab-sandbox "$root" ;;
    --chdir) chdir=$1; shift ;;
    --uid) drop="--reuid=$1 --regid=$1 --clear-groups"; shift ;;
    --nocaps) drop=" " ;;
    --ro|--rw|--dev)
      [ -n "$root" ] || fail "$arg before --root"
      bind "$1" "$2" "${arg#--}"; shift 2 ;;
    --link)
      [ -d "$root${2%/*}" ] || run mkdir -p "$root${2%/*}"
      run ln -s "$1" "$root$2"; shift 2 ;;
    --mask)
      if [ -d "$root$1" ]; then run mount -t tmpfs -o ro,mode=0755,nosuid,nodev,size=4k tmpfs "$root$1"
      else bind /dev/null "$1" ro
      fi
      shift ;;
    --tmpfs)
      [ -d "$root$1" ] || run mkdir -p "$root$1"
      run mount -t tmpfs -o "mode=1777,nosuid,nodev,size=$2" tmpfs "$root$1"; shift 2 ;;
    --devfs)
      dev=$1; shift
      run mkdir -p "$root$dev"
      run mount -t tmpfs -o mode=0755,nosuid,noexec,size=64k devfs "$root$dev"
      for node in null zero full random urandom tty; do
        bind "/dev/$node" "$dev/$node" dev
      done
      for link in fd:/proc/self/fd stdin:/proc/self/fd/0 stdout:/proc/self/fd/1 stderr:/proc/self/fd/2; do
        run ln -s "${link#*:}" "$root$dev/${link%%:*}"
      done ;;
    --proc)
      proc=$1; shift
      run mkdir -p "$root$proc"
      run mount -t proc -o nosuid,nodev,noexec proc "$root$proc"
      for part in sys sysrq-trigger irq bus; do
        if [ -e "$root$proc/$part" ]; then bind "$root$proc/$part" "$proc/$part" ro; fi
      done ;;
    --sysfs)
      run mkdir -p "$root$1"
      run mount -t sysfs -o ro,nosuid,nodev,noexec sysfs "$root$1"; shift ;;
    *) fail "unknown option $arg" ;;
  esac
done
[ $# -gt 0 ] || fail "no command"

# 1. The new root.
if [ -n "$root" ]; then
  cd "$root" || fail "cd $root"
  run mkdir .old-root
  run pivot_root . .old-root
  cd / || fail "cd /"
  run umount -l /.old-root
  run rmdir /.old-root
  run mount -o remount,bind,ro,nosuid,nodev /
  cd "$old" 2>/dev/null || cd /tmp || fail "cd /tmp"
fi
# 2.
if [ -n "$chdir" ]; then cd "$chdir" || fail "cd $chdir"; fi

# 3. The environment: names first, values read through the shell (a value may
# hold newlines, and a name found in a value is kept only if it is a variable).
for name in $(env | sed -n 's/^\([A-Za-z_][A-Za-z0-9_]*\)=.*/\1/p'); do
  case $name in
    CUDALAB_SEED) continue ;;  # the instructor's secret seed
    PATH|LANG|LANGUAGE|LC_*|CUDA_*|CUDALAB_*|NVIDIA_*|NV_*|LD_LIBRARY_PATH) ;;
    NVCC_*|CCACHE_*|SOURCE_DATE_EPOCH) ;;
    *) continue ;;
  esac
  eval "[ -n \"\${$name+set}\" ]" || continue
  eval "value=\${$name}"
  if [ "$name" = PATH ]; then
    [ -n "$path_in" ] || continue
    value=$path_in
  fi
  set -- "$name=$value" "$@"
done
set -- env -i HOME=/tmp TMPDIR=/tmp "$@"

# 4. The command.
if [ -n "$drop" ]; then
  # shellcheck disable=SC2086 # $drop is a list of words
  set -- setpriv $drop --inh-caps=-all --bounding-set=-all --no-new-privs -- "$@"
fi
if [ -n "$root" ]; then
  "$@"
  exit
fi
exec "$@"
