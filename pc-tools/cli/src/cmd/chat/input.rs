//! Where `ssnail chat` reads its lines: a line editor with history on a
//! terminal, plain lines from a pipe or file.

use std::io::{BufRead, IsTerminal};

/// Where input lines come from: a line editor with history on a terminal,
/// plain lines otherwise (pipes, files).
pub(super) enum Input {
    Editor(Box<rustyline::DefaultEditor>),
    Plain(std::io::StdinLock<'static>),
}

impl Input {
    pub(super) fn open() -> Input {
        if std::io::stdin().is_terminal() {
            if let Ok(ed) = rustyline::DefaultEditor::new() {
                return Input::Editor(Box::new(ed));
            }
        }
        Input::Plain(std::io::stdin().lock())
    }

    pub(super) fn interactive(&self) -> bool {
        matches!(self, Input::Editor(_))
    }

    /// The next line without its line ending; None at end of input or
    /// Ctrl-C. `typed`: text already typed (type-ahead), shown after "> ".
    pub(super) fn line(&mut self, typed: &str) -> Option<String> {
        match self {
            Input::Editor(ed) => match ed.readline_with_initial("> ", (typed, "")) {
                Ok(line) => {
                    if !line.trim().is_empty() {
                        let _ = ed.add_history_entry(line.as_str());
                    }
                    Some(line)
                }
                Err(_) => None,
            },
            Input::Plain(stdin) => {
                let mut buf = Vec::new();
                match stdin.read_until(b'\n', &mut buf) {
                    Ok(0) | Err(_) => None,
                    Ok(_) => {
                        while matches!(buf.last(), Some(b'\n' | b'\r')) {
                            buf.pop();
                        }
                        Some(String::from_utf8_lossy(&buf).into_owned())
                    }
                }
            }
        }
    }
}
