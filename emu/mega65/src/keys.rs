//! The hardware typing queue at $D610 (spec §M6) fed from a key script.
//!
//! Key-script syntax (also in the CLI help): plain characters are typed as they are; `{NAME}` is a
//! special key: `{RETURN}` (or a newline), `{STOP}` (RUN/STOP), `{UP}` `{DOWN}` `{LEFT}` `{RIGHT}`,
//! `{DEL}`, `{HOME}`, `{CLR}`, `{ESC}`, `{TAB}`, `{F1}`…`{F14}`, `{$xx}` a raw ASCII code, `{{` a
//! literal `{`; `{WAIT s}` delays the following keys by `s` emulated seconds. Keys without a wait in
//! between arrive together; the queue holds them until the program pops them (write to $D610).

use std::collections::VecDeque;

use super::machine::CPU_HZ;

/// A parsed key script: (delay before this key in cycles, ASCII code).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KeyScript {
    pub events: Vec<(u64, u8)>,
}

/// ASCII codes the MEGA65 queue reports for the special keys.
fn special_key(name: &str) -> Option<u8> {
    let n = name.to_ascii_uppercase();
    Some(match n.as_str() {
        "RETURN" | "ENTER" | "CR" => 0x0D,
        "STOP" | "RUNSTOP" | "RUN/STOP" => 0x03,
        "UP" => 0x91,
        "DOWN" => 0x11,
        "LEFT" => 0x9D,
        "RIGHT" => 0x1D,
        "DEL" | "INST/DEL" | "BACKSPACE" => 0x14,
        "HOME" => 0x13,
        "CLR" => 0x93,
        "ESC" => 0x1B,
        "TAB" => 0x09,
        "SPACE" => 0x20,
        _ => {
            if let Some(f) = n.strip_prefix('F') {
                let k: u8 = f.parse().ok()?;
                // F1..F14 as the MEGA65 queue reports them ($F1..$FE).
                if (1..=14).contains(&k) {
                    return Some(0xF0 + k);
                }
            }
            if let Some(h) = n.strip_prefix('$') {
                return u8::from_str_radix(h, 16).ok();
            }
            return None;
        }
    })
}

impl KeyScript {
    /// Parses the script syntax described in the module documentation.
    pub fn parse(text: &str) -> Result<KeyScript, String> {
        let mut events = Vec::new();
        let mut delay = 0u64;
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '{' if chars.peek() == Some(&'{') => {
                    chars.next();
                    events.push((delay, b'{'));
                    delay = 0;
                }
                '{' => {
                    let mut name = String::new();
                    loop {
                        match chars.next() {
                            Some('}') => break,
                            Some(ch) => name.push(ch),
                            None => {
                                return Err(format!(
                                    "unclosed '{{' in key script near \"{{{name}\""
                                ))
                            }
                        }
                    }
                    let trimmed = name.trim();
                    if let Some(secs) = trimmed
                        .strip_prefix("WAIT")
                        .or_else(|| trimmed.strip_prefix("wait"))
                    {
                        let s: f64 = secs
                            .trim()
                            .parse()
                            .map_err(|_| format!("bad delay in {{{name}}}: expected seconds"))?;
                        if !(0.0..=1e6).contains(&s) {
                            return Err(format!("bad delay in {{{name}}}"));
                        }
                        delay += (s * CPU_HZ as f64).round() as u64;
                    } else {
                        let code = special_key(trimmed)
                            .ok_or_else(|| format!("unknown key {{{name}}} in key script"))?;
                        events.push((delay, code));
                        delay = 0;
                    }
                }
                '\n' => {
                    events.push((delay, 0x0D));
                    delay = 0;
                }
                c if (' '..='~').contains(&c) => {
                    events.push((delay, c as u8));
                    delay = 0;
                }
                c => return Err(format!("character {c:?} cannot be typed; use {{$xx}}")),
            }
        }
        Ok(KeyScript { events })
    }
}

/// How long a scripted key stays down after it is typed: 0.1 s, a short press. The matrix
/// registers show it held for that long (only RUN/STOP is placed in the matrix, see
/// [`KeyQueue::matrix_column`]).
pub const KEY_HOLD: u64 = CPU_HZ / 10;

/// RUN/STOP: key 63 of the MEGA65 matrix, typed as $03 (mega65-core matrix_to_ascii.vhdl line
/// 152); key number = column x 8 + bit (lines 934-936).
const STOP_CODE: u8 = 0x03;
const STOP_COLUMN: u8 = 7;
const STOP_BIT: u8 = 0x80;

/// The $D610 queue plus the keys not yet arrived.
#[derive(Clone, Debug, Default)]
pub struct KeyQueue {
    /// Keys with their absolute arrival cycle.
    pending: VecDeque<(u64, u8)>,
    queue: VecDeque<u8>,
    /// RUN/STOP is down until this cycle.
    stop_held_until: u64,
    /// Reads of $D610 that found the queue empty, since start: a program waiting for a key
    /// polls it thousands of times a frame (`ssnail mega65 --interactive` sleeps then).
    pub(crate) empty_polls: u64,
}

impl KeyQueue {
    /// Schedules a script starting at cycle `start`.
    pub fn schedule(&mut self, script: &KeyScript, start: u64) {
        let mut t = self
            .pending
            .back()
            .map(|&(t, _)| t)
            .unwrap_or(start)
            .max(start);
        for &(delay, code) in &script.events {
            t += delay;
            self.pending.push_back((t, code));
        }
    }

    pub(crate) fn advance(&mut self, now: u64) {
        while let Some(&(t, code)) = self.pending.front() {
            if t > now {
                break;
            }
            self.queue.push_back(code);
            if code == STOP_CODE {
                self.stop_held_until = t + KEY_HOLD;
            }
            self.pending.pop_front();
        }
    }

    pub(crate) fn next_time(&self) -> Option<u64> {
        self.pending.front().map(|&(t, _)| t)
    }

    /// Keys typed but not yet read, plus keys still to arrive.
    pub fn remaining(&self) -> usize {
        self.pending.len() + self.queue.len()
    }

    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// How many reads of $D610 found the queue empty since start.
    pub fn empty_polls(&self) -> u64 {
        self.empty_polls
    }

    pub fn ascii(&self) -> u8 {
        self.queue.front().copied().unwrap_or(0)
    }

    /// PETSCII of the top key ($D619): letters swap case as in the lower-case character set.
    pub fn petscii(&self) -> u8 {
        match self.queue.front().copied() {
            None => 0xFF,
            Some(c @ b'a'..=b'z') => c - 0x20,
            Some(c @ b'A'..=b'Z') => c + 0x80,
            Some(c) => c,
        }
    }

    /// $D613 with $D614 = `column`: one column of the combined keyboard matrix, 0 = key down
    /// (iomap.txt lines 532-533; c65uart.vhdl lines 779-784; keyboard_complex.vhdl lines 365-371:
    /// columns 0-9, others read $FF). Only RUN/STOP is modelled (column 7, bit 7), held for
    /// [`KEY_HOLD`] after it was typed; every other key reads as up.
    pub fn matrix_column(&self, column: u8, now: u64) -> u8 {
        if column == STOP_COLUMN && now < self.stop_held_until {
            !STOP_BIT
        } else {
            0xFF
        }
    }

    pub fn pop(&mut self) {
        self.queue.pop_front();
    }

    pub fn flush(&mut self) {
        self.queue.clear();
    }
}
