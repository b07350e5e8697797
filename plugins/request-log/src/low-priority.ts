/**
 * CPU priority (Linux nice) of a thread: the request log's writer runs at nice 19 so that writing logs only uses CPU
 * the request path does not need, and is raised while the log is behind (queue.ts). Best effort: on other systems,
 * or without libc, nothing changes (false).
 */
type Libc = {
  syscall(number: number): number | bigint;
  setpriority(which: number, who: number, prio: number): number;
};

let libc: Libc | null | undefined;

/** libc's functions, opened once per thread (each Worker has its own module instance). */
function openLibc(): Libc | null {
  if (libc !== undefined) return libc;
  libc = null;
  if (process.platform !== 'linux') return libc;
  try {
    const { dlopen, FFIType } = require('bun:ffi') as typeof import('bun:ffi');
    const lib = dlopen('libc.so.6', {
      syscall: { args: [FFIType.i64], returns: FFIType.i64 },
      setpriority: { args: [FFIType.i32, FFIType.u32, FFIType.i32], returns: FFIType.i32 },
    });
    libc = lib.symbols as unknown as Libc;
  } catch {
    libc = null;
  }
  return libc;
}

/** The calling thread's kernel id (gettid), or undefined where it cannot be had. */
export function currentThreadId(): number | undefined {
  const lib = openLibc();
  if (!lib) return undefined;
  const tid = Number(lib.syscall(process.arch === 'arm64' ? 178 : 186));
  return tid > 0 ? tid : undefined;
}

/** Lowers the calling thread's priority to nice 19 (or `nice`). */
export function lowerThreadPriority(nice = 19): boolean {
  return setThreadPriority(nice);
}

/**
 * Sets the nice value of thread `tid` of this process (default: the calling thread). Another thread's can be set
 * too, so the main thread changes the writer's at once, even while the writer is in the middle of a batch. Lowering
 * priority is always allowed; raising it (a smaller value) needs CAP_SYS_NICE or RLIMIT_NICE (`ulimit -e`, e.g. 20
 * allows nice 0), else it fails (false) and nothing changes.
 */
export function setThreadPriority(nice: number, tid = currentThreadId()): boolean {
  const lib = openLibc();
  if (!lib || tid === undefined) return false;
  // PRIO_PROCESS (0) with a thread id applies to that thread only.
  return lib.setpriority(0, tid, nice) === 0;
}
