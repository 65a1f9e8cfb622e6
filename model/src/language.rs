//! The trace language (see issue): written next.
