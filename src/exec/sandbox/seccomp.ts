/**
 * The seccomp filter of the bubblewrap sandbox, as the classic BPF program `bwrap --seccomp FD` loads. Built here
 * rather than with libseccomp so that no C library is needed: it is a short, fixed list.
 *
 * It denies (EPERM) what a reproduction never needs and what sandbox escapes are made of: debugging other processes
 * (ptrace, process_vm_*, pidfd_getfd, kcmp), new namespaces (unshare, setns, clone with namespace flags), mounts,
 * kernel interfaces with a history of exploits (bpf, perf_event_open, userfaultfd, io_uring, keyctl), modules,
 * kexec, reboot, swap, clocks, open_by_handle_at, and typing into a terminal (TIOCSTI). `clone3` answers ENOSYS: its
 * flags sit behind a pointer a filter cannot read, and libc falls back to `clone`, whose flags it can. A syscall of
 * another ABI (i386, x32) kills the process: the numbers below would not mean the same there.
 */

export type SeccompArch = 'x86_64' | 'aarch64';

/** Syscalls denied outright, by name. Names absent from an architecture's table (iopl on arm64) are skipped. */
export const DENIED_SYSCALLS = [
  'ptrace',
  'process_vm_readv',
  'process_vm_writev',
  'pidfd_getfd',
  'kcmp',
  'setns',
  'mount',
  'umount2',
  'pivot_root',
  'chroot',
  'fsopen',
  'fsconfig',
  'fsmount',
  'fspick',
  'move_mount',
  'open_tree',
  'mount_setattr',
  'bpf',
  'perf_event_open',
  'userfaultfd',
  'io_uring_setup',
  'io_uring_enter',
  'io_uring_register',
  'keyctl',
  'add_key',
  'request_key',
  'init_module',
  'finit_module',
  'delete_module',
  'kexec_load',
  'kexec_file_load',
  'reboot',
  'swapon',
  'swapoff',
  'acct',
  'quotactl',
  'syslog',
  'open_by_handle_at',
  'name_to_handle_at',
  'lookup_dcookie',
  'settimeofday',
  'clock_settime',
  'clock_adjtime',
  'vhangup',
  'iopl',
  'ioperm',
  'uselib',
  'sethostname',
  'setdomainname',
] as const;

type SyscallName = (typeof DENIED_SYSCALLS)[number] | 'clone' | 'clone3' | 'unshare' | 'ioctl';

/** Syscall numbers (checked against the kernel headers by test/exec/sandbox/seccomp.test.ts where they are installed). */
export const SYSCALL_NUMBERS: Record<SeccompArch, Partial<Record<SyscallName, number>>> = {
  x86_64: {
    ioctl: 16,
    clone: 56,
    ptrace: 101,
    syslog: 103,
    uselib: 134,
    vhangup: 153,
    pivot_root: 155,
    chroot: 161,
    acct: 163,
    settimeofday: 164,
    mount: 165,
    umount2: 166,
    swapon: 167,
    swapoff: 168,
    reboot: 169,
    sethostname: 170,
    setdomainname: 171,
    iopl: 172,
    ioperm: 173,
    init_module: 175,
    delete_module: 176,
    quotactl: 179,
    lookup_dcookie: 212,
    clock_settime: 227,
    kexec_load: 246,
    add_key: 248,
    request_key: 249,
    keyctl: 250,
    unshare: 272,
    perf_event_open: 298,
    name_to_handle_at: 303,
    open_by_handle_at: 304,
    clock_adjtime: 305,
    setns: 308,
    process_vm_readv: 310,
    process_vm_writev: 311,
    kcmp: 312,
    finit_module: 313,
    kexec_file_load: 320,
    bpf: 321,
    userfaultfd: 323,
    io_uring_setup: 425,
    io_uring_enter: 426,
    io_uring_register: 427,
    open_tree: 428,
    move_mount: 429,
    fsopen: 430,
    fsconfig: 431,
    fsmount: 432,
    fspick: 433,
    clone3: 435,
    pidfd_getfd: 438,
    mount_setattr: 442,
  },
  aarch64: {
    lookup_dcookie: 18,
    ioctl: 29,
    umount2: 39,
    mount: 40,
    pivot_root: 41,
    chroot: 51,
    vhangup: 58,
    quotactl: 60,
    acct: 89,
    unshare: 97,
    kexec_load: 104,
    init_module: 105,
    delete_module: 106,
    clock_settime: 112,
    syslog: 116,
    ptrace: 117,
    reboot: 142,
    sethostname: 161,
    setdomainname: 162,
    settimeofday: 170,
    add_key: 217,
    request_key: 218,
    keyctl: 219,
    clone: 220,
    swapon: 224,
    swapoff: 225,
    perf_event_open: 241,
    name_to_handle_at: 264,
    open_by_handle_at: 265,
    clock_adjtime: 266,
    setns: 268,
    process_vm_readv: 270,
    process_vm_writev: 271,
    kcmp: 272,
    finit_module: 273,
    bpf: 280,
    userfaultfd: 282,
    kexec_file_load: 294,
    io_uring_setup: 425,
    io_uring_enter: 426,
    io_uring_register: 427,
    open_tree: 428,
    move_mount: 429,
    fsopen: 430,
    fsconfig: 431,
    fsmount: 432,
    fspick: 433,
    clone3: 435,
    pidfd_getfd: 438,
    mount_setattr: 442,
  },
};

const AUDIT_ARCH: Record<SeccompArch, number> = { x86_64: 0xc000003e, aarch64: 0xc00000b7 };

/** Every CLONE_NEW* flag: a clone or unshare with any of them would make a namespace (user, mount, pid …). */
export const CLONE_NAMESPACE_FLAGS = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000 | 0x00000080;

const TIOCSTI = 0x5412;
const TIOCLINUX = 0x541c;
const EPERM = 1;
const ENOSYS = 38;

// Classic BPF opcodes.
const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JGE_K = 0x35;
const JSET_K = 0x45;
const RET_K = 0x06;
const RET_ALLOW = 0x7fff0000;
const RET_KILL_PROCESS = 0x80000000;
const retErrno = (errno: number): number => 0x00050000 | errno;

// Offsets in struct seccomp_data: nr, arch, instruction pointer, then six 64-bit args (low half first on LE).
const OFF_NR = 0;
const OFF_ARCH = 4;
const offArgLow = (i: number): number => 16 + 8 * i;

interface Insn {
  code: number;
  k: number;
  /** Jump targets as labels (resolved to relative offsets); absent = fall through. */
  jt?: string;
  jf?: string;
}

/** The architecture this process runs on, or null where the filter has no table. */
export function hostSeccompArch(arch: string = process.arch): SeccompArch | null {
  if (arch === 'x64') return 'x86_64';
  if (arch === 'arm64') return 'aarch64';
  return null;
}

/** The filter as the bytes of a `struct sock_filter[]` in host byte order, ready for `bwrap --seccomp FD`. */
export function buildSeccompFilter(arch: SeccompArch): Buffer {
  const nr = SYSCALL_NUMBERS[arch];
  const prog: Insn[] = [];
  const labels = new Map<string, number>();
  const label = (name: string): void => void labels.set(name, prog.length);

  prog.push({ code: LD_W_ABS, k: OFF_ARCH });
  prog.push({ code: JEQ_K, k: AUDIT_ARCH[arch], jf: 'kill' });
  prog.push({ code: LD_W_ABS, k: OFF_NR });
  // x32 syscalls on x86_64 carry bit 30; every number at or above it is another ABI.
  if (arch === 'x86_64') prog.push({ code: JGE_K, k: 0x40000000, jt: 'kill' });
  for (const name of DENIED_SYSCALLS) {
    const n = nr[name];
    if (n !== undefined) prog.push({ code: JEQ_K, k: n, jt: 'eperm' });
  }
  prog.push({ code: JEQ_K, k: nr.clone3 as number, jt: 'enosys' });
  prog.push({ code: JEQ_K, k: nr.clone as number, jt: 'check_flags' });
  prog.push({ code: JEQ_K, k: nr.unshare as number, jt: 'check_flags' });
  prog.push({ code: JEQ_K, k: nr.ioctl as number, jt: 'check_ioctl' });
  prog.push({ code: RET_K, k: RET_ALLOW });

  label('check_flags');
  prog.push({ code: LD_W_ABS, k: offArgLow(0) });
  prog.push({ code: JSET_K, k: CLONE_NAMESPACE_FLAGS, jt: 'eperm' });
  prog.push({ code: RET_K, k: RET_ALLOW });

  label('check_ioctl');
  prog.push({ code: LD_W_ABS, k: offArgLow(1) });
  prog.push({ code: JEQ_K, k: TIOCSTI, jt: 'eperm' });
  prog.push({ code: JEQ_K, k: TIOCLINUX, jt: 'eperm' });
  prog.push({ code: RET_K, k: RET_ALLOW });

  label('eperm');
  prog.push({ code: RET_K, k: retErrno(EPERM) });
  label('enosys');
  prog.push({ code: RET_K, k: retErrno(ENOSYS) });
  label('kill');
  prog.push({ code: RET_K, k: RET_KILL_PROCESS });

  const buf = Buffer.alloc(prog.length * 8);
  const le = new Uint16Array(new Uint8Array([1, 0]).buffer)[0] === 1;
  prog.forEach((insn, i) => {
    const jump = (target: string | undefined): number => {
      if (target === undefined) return 0;
      const at = labels.get(target);
      if (at === undefined) throw new Error(`seccomp: unknown label ${target}`);
      const off = at - i - 1;
      if (off < 0 || off > 255) throw new Error(`seccomp: jump to ${target} out of range`);
      return off;
    };
    if (le) {
      buf.writeUInt16LE(insn.code, i * 8);
      buf.writeUInt32LE(insn.k >>> 0, i * 8 + 4);
    } else {
      buf.writeUInt16BE(insn.code, i * 8);
      buf.writeUInt32BE(insn.k >>> 0, i * 8 + 4);
    }
    buf.writeUInt8(jump(insn.jt), i * 8 + 2);
    buf.writeUInt8(jump(insn.jf), i * 8 + 3);
  });
  return buf;
}
