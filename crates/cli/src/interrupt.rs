//! Stopping by a signal: the unfinished outputs go, and the process ends by the same signal.
//!
//! A command writes each output to a hidden temporary file first (`.fct.csv.tmp`, the
//! streaming `.qct.csv.tmp`, a figures' `.plots.tmp` folder) and renames it into place at the
//! end ([`crate::output::Staged`]). Stopped by Ctrl-C, `kill` or a closed terminal, the
//! process used to leave these behind. [`install`] makes SIGINT, SIGTERM and SIGHUP remove
//! every temporary file then registered ([`crate::output::PENDING`]), and then end the process
//! by the signal it got, as it would have ended without this: the shell sees an interrupted
//! command (`$?` is 130 for SIGINT), and a script's loop over runs stops as it should. Outputs
//! already in place are kept, and a set of outputs is either all in place or not at all.
//!
//! A signal the process was started with ignored (`nohup`, a background job of a
//! non-interactive shell) stays ignored.

/// Arranges for SIGINT, SIGTERM and SIGHUP to remove the process's temporary outputs before
/// it ends (see the module's documentation). Call it first in `main`, before any thread is
/// started: the signals are blocked in the calling thread, so that every thread started after
/// inherits the mask and one thread of this module's takes them. Does nothing on platforms
/// other than Unix, or if the thread cannot be started.
pub fn install() {
    #[cfg(unix)]
    unix::install();
}

#[cfg(unix)]
mod unix {
    use crate::output::PENDING;

    /// The signals taken, each one that ends the process by default.
    const SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

    pub(super) fn install() {
        // SAFETY: `sigset_t` is plain data that `sigemptyset` initialises; `sigaction` with a
        // null new action only reads the current one.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            let mut any = false;
            for sig in SIGNALS {
                let mut old: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(sig, std::ptr::null(), &mut old) != 0 {
                    continue;
                }
                if old.sa_sigaction == libc::SIG_IGN {
                    continue;
                }
                libc::sigaddset(&mut set, sig);
                any = true;
            }
            if !any {
                return;
            }
            let mut before: libc::sigset_t = std::mem::zeroed();
            if libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut before) != 0 {
                return;
            }
            let spawned = std::thread::Builder::new()
                .name("dcsim-signals".into())
                .stack_size(128 * 1024)
                .spawn(move || wait(set));
            if spawned.is_err() {
                // Nobody would take the signals: unblock them again.
                libc::pthread_sigmask(libc::SIG_SETMASK, &before, std::ptr::null_mut());
            }
        }
    }

    /// Waits for one of the signals in `set`, removes the temporary outputs, and ends the
    /// process by that signal. Nothing on the way can panic or wait: a panic here would leave
    /// the signals blocked in every thread, and the process could then be stopped only by
    /// SIGKILL.
    fn wait(set: libc::sigset_t) {
        let mut sig: libc::c_int = 0;
        // SAFETY: `set` is an initialised signal set; `sig` is written by `sigwait`.
        while unsafe { libc::sigwait(&set, &mut sig) } != 0 {}
        PENDING.remove_all_then(|removed| {
            if removed > 0 {
                tell(removed);
            }
            // SAFETY: the signal's action is still its default (this module never sets one),
            // so unblocking it in this thread and raising it here ends the process by it; the
            // registry stays locked meanwhile, so no thread makes or renames an output after
            // the removal.
            unsafe {
                let mut one: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut one);
                libc::sigaddset(&mut one, sig);
                libc::pthread_sigmask(libc::SIG_UNBLOCK, &one, std::ptr::null_mut());
                libc::raise(sig);
            }
            // Not reached where the default action ends the process.
            std::process::exit(128 + sig);
        })
    }

    /// Says on standard error how many unfinished outputs were removed, if it can at once:
    /// not through `eprintln!`, which panics when the write fails (a closed terminal, the
    /// end of a pipe gone with the same Ctrl-C), nor into a full pipe, which would wait.
    fn tell(removed: usize) {
        use std::io::IsTerminal as _;
        // On a new line, where a progress bar may have been drawing.
        let fresh = if std::io::stderr().is_terminal() { "\n" } else { "" };
        let text = format!(
            "{fresh}dcsim: stopped by a signal; removed {removed} unfinished output{}\n",
            if removed == 1 { "" } else { "s" }
        );
        let mut fd = libc::pollfd { fd: 2, events: libc::POLLOUT, revents: 0 };
        // SAFETY: `fd` is one valid `pollfd`; `write` reads `text.len()` bytes of `text`. A
        // writable pipe has room for a whole page, more than the message.
        unsafe {
            if libc::poll(&mut fd, 1, 0) == 1 && fd.revents & libc::POLLOUT != 0 {
                let _ = libc::write(2, text.as_ptr().cast(), text.len());
            }
        }
    }
}
