//! Cancellation: the reader task marks request and progress ids as cancelled as soon
//! as a `cancel` request arrives (before it is dispatched), so a long launch that is
//! being awaited can give up.

use std::collections::HashSet;
use std::sync::Mutex;
use tokio::sync::Notify;

#[derive(Default)]
pub struct Cancels {
    ids: Mutex<(HashSet<i64>, HashSet<String>)>,
    notify: Notify,
}

impl Cancels {
    /// Record a `cancel` request's arguments.
    pub fn cancel(&self, request_id: Option<i64>, progress_id: Option<String>) {
        let mut ids = self.ids.lock().unwrap_or_else(|e| e.into_inner());
        ids.0.extend(request_id);
        ids.1.extend(progress_id);
        drop(ids);
        self.notify.notify_waiters();
    }

    pub fn is_cancelled(&self, request_id: i64, progress_id: &str) -> bool {
        let ids = self.ids.lock().unwrap_or_else(|e| e.into_inner());
        ids.0.contains(&request_id) || ids.1.contains(progress_id)
    }

    /// Resolves once the request or its progress is cancelled.
    pub async fn cancelled(&self, request_id: i64, progress_id: &str) {
        loop {
            let notified = self.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.is_cancelled(request_id, progress_id) {
                return;
            }
            notified.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[tokio::test]
    async fn a_cancel_wakes_the_waiter() {
        let cancels = Arc::new(Cancels::default());
        let waiter = {
            let cancels = cancels.clone();
            tokio::spawn(async move { cancels.cancelled(7, "p7").await })
        };
        tokio::task::yield_now().await;
        assert!(!cancels.is_cancelled(7, "p7"));
        cancels.cancel(None, Some("p7".into()));
        waiter.await.unwrap();
        assert!(cancels.is_cancelled(1, "p7"));
        assert!(!cancels.is_cancelled(8, "other"));
    }
}
