/**
 * Lowers the calling thread's CPU priority to nice 19 (Linux), so that writing logs only uses CPU the request path
 * does not need: under full load the queue grows (bounded) and drains when load drops, instead of log writes
 * slowing every request down. Best effort: on other systems, or without libc, it does nothing.
 */
export function lowerThreadPriority(nice = 19): boolean {
  return setThreadPriority(nice);
}

/**
 * Sets the calling thread's nice value. Lowering priority is always allowed; raising it again (a smaller value)
 * needs CAP_SYS_NICE or RLIMIT_NICE (`ulimit -e`, e.g. 20 allows nice 0), else it fails (false) and nothing changes.
 */
export function setThreadPriority(nice: number): boolean {
  if (process.platform !== 'linux') return false;
  try {
    const { dlopen, FFIType } = require('bun:ffi') as typeof import('bun:ffi');
    const libc = dlopen('libc.so.6', {
      syscall: { args: [FFIType.i64], returns: FFIType.i64 },
      setpriority: { args: [FFIType.i32, FFIType.u32, FFIType.i32], returns: FFIType.i32 },
    });
    const SYS_GETTID = process.arch === 'arm64' ? 178 : 186;
    const tid = Number(libc.symbols.syscall(SYS_GETTID));
    // PRIO_PROCESS (0) with a thread id applies to that thread only.
    const ok = libc.symbols.setpriority(0, tid, nice) === 0;
    libc.close();
    return ok;
  } catch {
    return false;
  }
}
