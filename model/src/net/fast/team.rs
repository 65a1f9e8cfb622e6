//! Two threads working on one token: the calling thread and a worker that waits for
//! work by spinning for a while, then sleeping.
//!
//! A decoded token is some forty small jobs (a matrix product, a layer's attention),
//! each a few microseconds long, so handing one over must cost far less than a thread
//! pool's wake-up: the caller publishes the job with one atomic store and the worker,
//! spinning, sees it within a cache-line transfer. A worker with nothing to do for
//! [`SPIN`] goes to sleep on a condition variable, so an idle debugger does not burn a
//! core.

use std::cell::UnsafeCell;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long a worker spins for the next job before it sleeps.
const SPIN: Duration = Duration::from_micros(200);

/// A job on one half of a range: the half, its rows of the output, its own extra.
type HalfJob<'a, E> = dyn Fn(std::ops::Range<usize>, &mut [f32], E) + Sync + 'a;

/// A job both threads run: called with the part (0 for the caller, 1 for the worker).
type Job<'a> = &'a (dyn Fn(usize) + Sync);

/// The calling thread plus, where the machine has a second core, one worker.
pub struct Team {
    worker: Option<(Arc<Shared>, JoinHandle<()>)>,
}

struct Shared {
    /// Raised by the caller to post job number `posted`.
    posted: AtomicU64,
    /// The last job number the worker finished.
    finished: AtomicU64,
    /// The job: written by the caller before it raises `posted`, read by the worker
    /// after it sees `posted` raised and before it raises `finished` (the two atomics
    /// order the accesses, so no lock is taken per job).
    job: UnsafeCell<Option<Job<'static>>>,
    /// Whether the worker is (or is about to be) asleep, and the lock and signal it
    /// sleeps on.
    sleepy: AtomicBool,
    asleep: Mutex<()>,
    wake: Condvar,
    /// A panic of the worker's part, handed to the caller.
    panic: Mutex<Option<Box<dyn std::any::Any + Send>>>,
    quit: AtomicBool,
}

impl Team {
    /// Two threads if `threads` is 2 or more and the worker starts, else the caller
    /// alone.
    pub fn new(threads: usize) -> Self {
        if threads < 2 {
            return Self { worker: None };
        }
        let shared = Arc::new(Shared {
            posted: AtomicU64::new(0),
            finished: AtomicU64::new(0),
            job: UnsafeCell::new(None),
            sleepy: AtomicBool::new(false),
            asleep: Mutex::new(()),
            wake: Condvar::new(),
            panic: Mutex::new(None),
            quit: AtomicBool::new(false),
        });
        let theirs = Arc::clone(&shared);
        let worker = std::thread::Builder::new()
            .name("neural-decode".into())
            .spawn(move || work(&theirs))
            .ok()
            .map(|handle| (shared, handle));
        Self { worker }
    }

    /// Threads a job runs on.
    pub fn parts(&self) -> usize {
        if self.worker.is_some() {
            2
        } else {
            1
        }
    }

    /// Runs `job(0, first)` here and `job(1, second)` on the worker, and returns when
    /// both are done; without a worker, runs both here one after the other.
    pub fn run_pair<T: Send>(&self, first: T, second: T, job: &(dyn Fn(usize, T) + Sync)) {
        let slots = Slots([UnsafeCell::new(Some(first)), UnsafeCell::new(Some(second))]);
        let take = |part: usize| slots.take(part);
        if self.worker.is_none() {
            job(0, take(0));
            job(1, take(1));
            return;
        }
        self.run(&|part| job(part, take(part)));
    }

    /// Runs `job(range, piece, extra)` on each half of `0..len` (split at a whole
    /// multiple of `unit`), where `piece` is the half's rows of `out` (`width` values
    /// each) and `extra` the half's own of the two.
    pub fn split<E: Send>(
        &self,
        out: &mut [f32],
        (len, unit, width): (usize, usize, usize),
        extra: [E; 2],
        job: &HalfJob<'_, E>,
    ) {
        let [a, b] = halves(len, unit);
        let (first, second) = out[..len * width].split_at_mut(a.end * width);
        let [ea, eb] = extra;
        self.run_pair((a, first, ea), (b, second, eb), &|_, (range, piece, e)| {
            job(range, piece, e)
        });
    }

    /// Runs `job(0)` here and `job(1)` on the worker (if any), and returns when both
    /// are done; a panic in either is raised here.
    pub fn run(&self, job: &(dyn Fn(usize) + Sync)) {
        let Some((shared, _)) = &self.worker else {
            return job(0);
        };
        // SAFETY: the worker only calls the job between `posted` being raised below and
        // its raising `finished` to match, and this function does not return (nor
        // unwind: our part's panic is caught) before it has seen that.
        let job: Job<'static> = unsafe { std::mem::transmute::<Job<'_>, Job<'static>>(job) };
        // SAFETY: the worker has finished every earlier job (we waited for it), so it
        // does not read `job` until it sees the `posted` raised below.
        unsafe { *shared.job.get() = Some(job) };
        let number = shared.posted.fetch_add(1, Ordering::SeqCst) + 1;
        if shared.sleepy.load(Ordering::SeqCst) {
            let _asleep = shared.asleep.lock().unwrap_or_else(|e| e.into_inner());
            shared.wake.notify_one();
        }
        let ours = catch_unwind(AssertUnwindSafe(|| job(0)));
        while shared.finished.load(Ordering::Acquire) < number {
            std::hint::spin_loop();
        }
        if let Err(panic) = ours {
            resume_unwind(panic);
        }
        if let Some(panic) = shared
            .panic
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        {
            resume_unwind(panic);
        }
    }
}

// SAFETY: `job` is the one field without a lock; see its comment for the order that
// keeps its reads and writes apart.
unsafe impl Sync for Shared {}
unsafe impl Send for Shared {}

/// Each part's piece of a pair, taken by that part alone.
struct Slots<T>([UnsafeCell<Option<T>>; 2]);

// SAFETY: a slot is only touched by the one part it belongs to (see `run_pair`).
unsafe impl<T: Send> Sync for Slots<T> {}

impl<T> Slots<T> {
    /// The piece of `part`, which only that part's one run takes.
    fn take(&self, part: usize) -> T {
        // SAFETY: see the `Sync` impl: no other thread touches this slot.
        unsafe { (*self.0[part].get()).take() }.expect("each part runs once")
    }
}

impl Drop for Team {
    fn drop(&mut self) {
        if let Some((shared, handle)) = self.worker.take() {
            shared.quit.store(true, Ordering::SeqCst);
            let _guard = shared.asleep.lock().unwrap_or_else(|e| e.into_inner());
            shared.wake.notify_one();
            drop(_guard);
            let _ = handle.join();
        }
    }
}

impl std::fmt::Debug for Team {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Team({} threads)", self.parts())
    }
}

fn work(shared: &Shared) {
    let mut done = 0u64;
    loop {
        let mut since = Instant::now();
        let mut spins = 0u32;
        // Wait for the next job: spin, then sleep.
        while shared.posted.load(Ordering::Acquire) == done {
            if shared.quit.load(Ordering::Acquire) {
                return;
            }
            std::hint::spin_loop();
            spins += 1;
            if spins.is_multiple_of(1024) && since.elapsed() > SPIN {
                // Say so before the last look at `posted` (both SeqCst): a caller that
                // posts after that look sees `sleepy` and wakes us under the lock.
                let mut asleep = shared.asleep.lock().unwrap_or_else(|e| e.into_inner());
                shared.sleepy.store(true, Ordering::SeqCst);
                while shared.posted.load(Ordering::SeqCst) == done
                    && !shared.quit.load(Ordering::Acquire)
                {
                    asleep = shared.wake.wait(asleep).unwrap_or_else(|e| e.into_inner());
                }
                drop(asleep);
                shared.sleepy.store(false, Ordering::SeqCst);
                since = Instant::now();
            }
        }
        // SAFETY: the caller wrote the job before raising `posted` (seen above) and
        // does not touch it again before we raise `finished`.
        let job = unsafe { (*shared.job.get()).take() };
        if let Some(job) = job {
            if let Err(panic) = catch_unwind(AssertUnwindSafe(|| job(1))) {
                *shared.panic.lock().unwrap_or_else(|e| e.into_inner()) = Some(panic);
            }
        }
        done += 1;
        shared.finished.store(done, Ordering::Release);
    }
}

/// `0..len` in two halves, split at a whole multiple of `unit`.
fn halves(len: usize, unit: usize) -> [std::ops::Range<usize>; 2] {
    let mid = (len.div_ceil(unit) / 2 * unit).min(len);
    [0..mid, mid..len]
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn both_parts_run_every_job_and_the_caller_waits_for_them() {
        let team = Team::new(2);
        assert_eq!(team.parts(), 2);
        let count = AtomicUsize::new(0);
        for round in 0..2000 {
            team.run(&|part| {
                count.fetch_add(part + 1, Ordering::Relaxed);
            });
            assert_eq!(count.load(Ordering::Relaxed), 3 * (round + 1));
            if round == 1000 {
                // Long enough for the worker to fall asleep: it must wake for the next.
                std::thread::sleep(SPIN * 5);
            }
        }
    }

    #[test]
    fn a_team_of_one_runs_the_job_here() {
        let team = Team::new(1);
        let parts = Mutex::new(Vec::new());
        team.run(&|part| parts.lock().unwrap().push(part));
        assert_eq!(*parts.lock().unwrap(), vec![0]);
    }

    #[test]
    fn a_panic_in_the_worker_reaches_the_caller_and_the_team_goes_on() {
        let team = Team::new(2);
        let caught = catch_unwind(AssertUnwindSafe(|| {
            team.run(&|part| assert_eq!(part, 0, "the worker's part fails"))
        }));
        assert!(caught.is_err());
        let count = AtomicUsize::new(0);
        team.run(&|_| {
            count.fetch_add(1, Ordering::Relaxed);
        });
        assert_eq!(count.load(Ordering::Relaxed), 2);
    }

    #[test]
    fn halves_cover_the_range_split_at_a_whole_unit() {
        for (len, unit, mid) in [
            (256, 16, 128),
            (250, 16, 128),
            (7, 16, 0),
            (48, 16, 16),
            (5, 1, 2),
        ] {
            let [a, b] = halves(len, unit);
            assert_eq!((a.start, a.end, b.start, b.end), (0, mid, mid, len));
        }
    }

    #[test]
    fn pairs_get_their_own_pieces_with_or_without_a_worker() {
        for threads in [1, 2] {
            let team = Team::new(threads);
            let mut out = vec![0usize; 10];
            let (a, b) = out.split_at_mut(4);
            team.run_pair(a, b, &|part, piece: &mut [usize]| piece.fill(part + 1));
            assert_eq!(out, [1, 1, 1, 1, 2, 2, 2, 2, 2, 2]);
        }
    }
}
