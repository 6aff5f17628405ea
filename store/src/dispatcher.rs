//! The dispatcher thread (RocketMQ `ReputMessageService`): every millisecond it builds
//! consume-queue entries for newly readable records of each registered log, and every
//! checkpoint interval flushes the consume queues and writes the checkpoint. One thread
//! serves all logs of a store, so [`Layout::PerTopic`](crate::Layout::PerTopic) does not
//! pay a polling thread per topic.

use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::flush::Stop;

/// How often the dispatcher looks for new records (RocketMQ `ReputMessageService` sleeps 1 ms).
const DISPATCH_INTERVAL: Duration = Duration::from_millis(1);

/// A log the dispatcher serves (ours: the seam that keeps this thread independent of the
/// log's type).
pub(crate) trait DispatchTarget: Send + Sync {
    /// One round: dispatch what became readable into the consume queues; checkpoint when due.
    fn dispatch_round(&self);
}

type Logs = Arc<Mutex<Vec<Arc<dyn DispatchTarget>>>>;

/// A running dispatcher thread and the logs it serves.
pub(crate) struct Dispatcher {
    logs: Logs,
    stop: Arc<Stop>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl Dispatcher {
    pub(crate) fn start() -> std::io::Result<Self> {
        let logs: Logs = Arc::default();
        let stop = Arc::new(Stop::default());
        let (l, s) = (Arc::clone(&logs), Arc::clone(&stop));
        let thread = std::thread::Builder::new().name("abslock-store-dispatch".into()).spawn(move || {
            while !s.wait(DISPATCH_INTERVAL) {
                for log in l.lock().unwrap_or_else(PoisonError::into_inner).iter() {
                    log.dispatch_round();
                }
            }
        })?;
        Ok(Self { logs, stop, thread: Mutex::new(Some(thread)) })
    }

    pub(crate) fn register(&self, log: Arc<dyn DispatchTarget>) {
        self.logs.lock().unwrap_or_else(PoisonError::into_inner).push(log);
    }

    /// Stops serving `log`; returns after any round in progress has finished.
    pub(crate) fn unregister<T: DispatchTarget + 'static>(&self, log: &Arc<T>) {
        let target = Arc::as_ptr(log).cast::<()>();
        self.logs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|l| !std::ptr::eq(Arc::as_ptr(l).cast::<()>(), target));
    }

    pub(crate) fn shutdown(&self) {
        self.stop.stop();
        if let Some(t) = self.thread.lock().unwrap_or_else(PoisonError::into_inner).take() {
            let _ = t.join();
        }
    }
}

impl Drop for Dispatcher {
    fn drop(&mut self) {
        self.shutdown();
    }
}
