//! Type-ahead while the model writes: on a terminal, keys typed during a
//! generation would be echoed into the model's text by the terminal and
//! then thrown away by the line editor. For the length of a turn the
//! terminal's echo and line mode are off; typed bytes are collected (at
//! every SYNC) and handed to the next prompt: whole lines run as the next
//! inputs, the rest is already typed at the next "> ".
//!
//! termios through libc by hand: the line editor (rustyline) owns the
//! terminal only while it reads a line, and has no "collect keys while I
//! am not reading" mode.

use std::sync::Mutex;

/// The terminal settings to put back (also by the Ctrl-C handler on exit).
static SAVED: Mutex<Option<(i32, libc::termios)>> = Mutex::new(None);

pub struct TypeAhead {
    fd: i32,
    pub bytes: Vec<u8>,
}

impl TypeAhead {
    /// Echo and line mode off on `fd` (a terminal); None if it is not one.
    /// Signals stay on, so Ctrl-C still stops the answer.
    pub fn start(fd: i32) -> Option<TypeAhead> {
        // SAFETY: termios is plain data; tcgetattr fills it or fails.
        unsafe {
            if libc::isatty(fd) != 1 {
                return None;
            }
            let mut t: libc::termios = std::mem::zeroed();
            if libc::tcgetattr(fd, &mut t) != 0 {
                return None;
            }
            let saved = t;
            t.c_lflag &= !(libc::ICANON | libc::ECHO);
            t.c_cc[libc::VMIN] = 0;
            t.c_cc[libc::VTIME] = 0;
            if libc::tcsetattr(fd, libc::TCSANOW, &t) != 0 {
                return None;
            }
            *SAVED.lock().unwrap_or_else(|e| e.into_inner()) = Some((fd, saved));
        }
        Some(TypeAhead {
            fd,
            bytes: Vec::new(),
        })
    }

    /// Take whatever has been typed (never waits: VMIN = VTIME = 0).
    pub fn poll(&mut self) {
        let mut buf = [0u8; 256];
        loop {
            // SAFETY: reading into a local buffer of the length given.
            let n = unsafe { libc::read(self.fd, buf.as_mut_ptr().cast(), buf.len()) };
            if n <= 0 {
                break;
            }
            self.bytes.extend_from_slice(&buf[..n as usize]);
        }
    }

    /// The typed bytes; the terminal as it was.
    pub fn finish(mut self) -> Vec<u8> {
        self.poll();
        std::mem::take(&mut self.bytes)
    }
}

impl Drop for TypeAhead {
    fn drop(&mut self) {
        restore();
    }
}

/// Put the terminal back if type-ahead changed it (idempotent).
pub fn restore() {
    if let Some((fd, t)) = SAVED.lock().unwrap_or_else(|e| e.into_inner()).take() {
        // SAFETY: the settings tcgetattr gave for this fd.
        unsafe {
            libc::tcsetattr(fd, libc::TCSANOW, &t);
        }
    }
}

/// Typed bytes as the keys meant them: whole lines (Enter) and the
/// unfinished rest; Backspace/DEL removes a character, other control
/// characters and bytes that are not UTF-8 are dropped.
pub fn lines(bytes: &[u8]) -> (Vec<String>, String) {
    let mut done = Vec::new();
    let mut cur = String::new();
    for c in String::from_utf8_lossy(bytes).chars() {
        match c {
            '\r' | '\n' => done.push(std::mem::take(&mut cur)),
            '\u{7f}' | '\u{8}' => {
                cur.pop();
            }
            '\u{fffd}' => {}
            c if c.is_control() => {}
            c => cur.push(c),
        }
    }
    (done, cur)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_bytes_become_lines_and_a_rest_with_backspace_applied() {
        assert_eq!(
            lines(b"abc\rdef\x7fg\x1b"),
            (vec!["abc".to_string()], "deg".to_string())
        );
        assert_eq!(
            lines(b"one\ntwo\n"),
            (vec!["one".into(), "two".into()], String::new())
        );
    }

    #[test]
    fn keys_typed_on_a_terminal_are_collected_without_echo() {
        // A pseudo-terminal: what is written to the master side is what a
        // user types; an echo would come back on the master side.
        let (mut master, mut slave) = (0, 0);
        // SAFETY: openpty fills two descriptors.
        let ok = unsafe {
            libc::openpty(
                &mut master,
                &mut slave,
                std::ptr::null_mut(),
                std::ptr::null(),
                std::ptr::null(),
            )
        };
        assert_eq!(ok, 0);
        let mut ta = TypeAhead::start(slave).expect("a pty is a terminal");
        let typed = b"hello\x7fp there\r";
        // SAFETY: writing a local buffer to the master side.
        unsafe { libc::write(master, typed.as_ptr().cast(), typed.len()) };
        std::thread::sleep(std::time::Duration::from_millis(50));
        ta.poll();
        assert_eq!(
            lines(&ta.bytes),
            (vec!["hellp there".to_string()], String::new())
        );
        // Nothing echoed back.
        unsafe { libc::fcntl(master, libc::F_SETFL, libc::O_NONBLOCK) };
        let mut buf = [0u8; 64];
        let n = unsafe { libc::read(master, buf.as_mut_ptr().cast(), buf.len()) };
        assert!(n <= 0, "echoed: {:?}", &buf[..n.max(0) as usize]);
        // Line mode and echo are back afterwards.
        drop(ta.finish());
        let mut t: libc::termios = unsafe { std::mem::zeroed() };
        unsafe { libc::tcgetattr(slave, &mut t) };
        assert_ne!(t.c_lflag & libc::ECHO, 0);
        assert_ne!(t.c_lflag & libc::ICANON, 0);
        unsafe {
            libc::close(master);
            libc::close(slave);
        }
    }
}
