//! Limits on the Python that the tracer runs: the program is real code, run as the
//! debugger's user, so it gets its own process group (killed whole when the run
//! ends), dies with the debugger, and runs under resource limits.

use std::process::Command;

/// Resource limits of one traced run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Confinement {
    /// CPU seconds before the kernel stops the process (SIGXCPU).
    pub cpu_seconds: u64,
    /// Address space in bytes (an allocation past it raises `MemoryError`).
    pub memory_bytes: u64,
    /// Largest file the process may write, in bytes.
    pub file_bytes: u64,
}

/// Set `command` up to run confined: a new process group, killed when the thread
/// that started it dies (Linux), under `limits`.
pub fn confine(command: &mut Command, limits: Confinement) {
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        command.process_group(0);
        // SAFETY: the hook runs in the child between fork and exec, and calls only
        // async-signal-safe functions (setrlimit, prctl) on plain values.
        unsafe {
            command.pre_exec(move || {
                set_limit(libc::RLIMIT_CPU, limits.cpu_seconds)?;
                set_limit(libc::RLIMIT_AS, limits.memory_bytes)?;
                set_limit(libc::RLIMIT_FSIZE, limits.file_bytes)?;
                #[cfg(target_os = "linux")]
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    #[cfg(not(unix))]
    let _ = (command, limits);
}

/// Lower a limit to `value` (never raise it above what the debugger itself has).
#[cfg(unix)]
fn set_limit(resource: LimitKind, value: u64) -> std::io::Result<()> {
    let mut current = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit read and write the one struct passed.
    unsafe {
        if libc::getrlimit(resource, &mut current) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let value = value as libc::rlim_t;
        let lowered = libc::rlimit {
            rlim_cur: current.rlim_cur.min(value),
            rlim_max: current.rlim_max.min(value.saturating_add(1)),
        };
        if libc::setrlimit(resource, &lowered) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(all(unix, target_os = "linux", target_env = "gnu"))]
type LimitKind = libc::__rlimit_resource_t;
#[cfg(all(unix, not(all(target_os = "linux", target_env = "gnu"))))]
type LimitKind = libc::c_int;

/// Kill every process left in the group that `leader` started (its children,
/// grandchildren, daemons that did not leave the group).
pub fn kill_group(leader: u32) {
    #[cfg(unix)]
    // SAFETY: kill with a negative pid signals a process group; no memory is touched.
    unsafe {
        libc::kill(-(leader as libc::pid_t), libc::SIGKILL);
    }
    #[cfg(not(unix))]
    let _ = leader;
}

/// Whether a run's status says the kernel stopped it for CPU time.
pub fn over_cpu_limit(status: &std::process::ExitStatus) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        status.signal() == Some(libc::SIGXCPU)
    }
    #[cfg(not(unix))]
    {
        let _ = status;
        false
    }
}
