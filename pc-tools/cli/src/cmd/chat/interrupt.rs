//! Ctrl-C in `ssnail chat`: whether a decoder is generating, and what a
//! press does then and at other times.

use std::sync::atomic::{AtomicU8, Ordering};

/// Ctrl-C: while a decoder runs, the first press asks the script to stop
/// after the current token (stop_request, reason 4); a second press, or one
/// at any other time outside the line editor, quits.
pub(super) static GENERATING: AtomicU8 = AtomicU8::new(0);
pub(super) const IDLE: u8 = 0;
pub(super) const RUNNING: u8 = 1;
pub(super) const STOP_ASKED: u8 = 2;

pub(super) fn install_interrupt_handler() {
    // Fails only if another handler is installed; plain SIGINT then still quits.
    let _ = ctrlc::set_handler(|| {
        if GENERATING
            .compare_exchange(RUNNING, STOP_ASKED, Ordering::SeqCst, Ordering::SeqCst)
            .is_err()
        {
            super::typeahead::restore();
            println!();
            std::process::exit(130);
        }
    });
}
