//! Text for an 80-column terminal: the model's answer wraps at words as the MEGA65 program's
//! screen does (a word that does not fit the line starts the next one; only a word longer
//! than the whole line is broken), and the bracketed status lines are cut at words into lines
//! of at most 80 columns, continued with one space.

/// The width status lines fit (the MEGA65's screen and the classic terminal).
pub const COLUMNS: usize = 80;

/// `line` cut at spaces into lines of at most `width` characters, each continuation line
/// starting with one space.
pub fn fit(line: &str, width: usize) -> String {
    let mut out = String::new();
    let mut cur = String::new();
    for (i, word) in line.split(' ').enumerate() {
        if i == 0 {
            cur.push_str(word);
        } else if cur.chars().count() + 1 + word.chars().count() > width {
            out.push_str(&cur);
            out.push('\n');
            cur = format!(" {word}");
        } else {
            cur.push(' ');
            cur.push_str(word);
        }
    }
    out.push_str(&cur);
    out
}

/// Streamed text wrapped at words to a width: a word is held back until it ends (a space or
/// a line break follows), then printed on this line if it fits, else on the next.
pub struct Wrap {
    width: usize,
    /// Characters on the current output line.
    col: usize,
    /// The word being received, not printed yet.
    word: String,
}

impl Wrap {
    pub fn new(width: usize) -> Wrap {
        Wrap {
            width: width.max(2),
            col: 0,
            word: String::new(),
        }
    }

    /// The output line starts afresh (after a prompt, or text printed around the wrapper).
    pub fn at_line_start(&mut self) {
        self.col = 0;
    }

    /// What to print for `text`: the words completed by it, with line breaks where needed.
    pub fn feed(&mut self, text: &str) -> String {
        let mut out = String::new();
        for c in text.chars() {
            match c {
                '\n' => {
                    self.put_word(&mut out);
                    out.push('\n');
                    self.col = 0;
                }
                ' ' => {
                    self.put_word(&mut out);
                    if self.col >= self.width {
                        out.push('\n');
                        self.col = 0;
                    } else if self.col > 0 {
                        out.push(' ');
                        self.col += 1;
                    }
                }
                c => self.word.push(c),
            }
        }
        out
    }

    /// The held-back word (at the end of an answer).
    pub fn flush(&mut self) -> String {
        let mut out = String::new();
        self.put_word(&mut out);
        out
    }

    fn put_word(&mut self, out: &mut String) {
        if self.word.is_empty() {
            return;
        }
        let mut word: Vec<char> = std::mem::take(&mut self.word).chars().collect();
        if self.col > 0 && self.col + word.len() > self.width {
            // The space before the word was printed: the line ends there.
            out.push('\n');
            self.col = 0;
        }
        // Only a word longer than a whole line is broken.
        while word.len() > self.width - self.col {
            let rest = word.split_off(self.width - self.col);
            out.extend(word);
            out.push('\n');
            self.col = 0;
            word = rest;
        }
        self.col += word.len();
        out.extend(word);
    }
}

/// The width of the terminal on stdout, or None when stdout is not a terminal (pipes and files
/// get the text unwrapped).
pub fn terminal_width() -> Option<usize> {
    // SAFETY: isatty and the TIOCGWINSZ ioctl only read/fill a local winsize.
    unsafe {
        if libc::isatty(1) != 1 {
            return None;
        }
        let mut ws: libc::winsize = std::mem::zeroed();
        if libc::ioctl(1, libc::TIOCGWINSZ, &mut ws) == 0 && ws.ws_col > 0 {
            Some(ws.ws_col as usize)
        } else {
            Some(COLUMNS)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wrapped(pieces: &[&str], width: usize) -> String {
        let mut w = Wrap::new(width);
        let mut out: String = pieces.iter().map(|p| w.feed(p)).collect();
        out += &w.flush();
        out
    }

    #[test]
    fn words_that_do_not_fit_start_the_next_line_whole() {
        // "very bad" at width 12 after "It is": "bad" moves down, never "b/ad".
        let out = wrapped(&["It is ", "very", " b", "ad", " news"], 12);
        assert_eq!(out, "It is very \nbad news");
        for line in out.lines() {
            assert!(line.trim_end().chars().count() <= 12, "{out:?}");
        }
        // Line breaks in the text reset the column.
        assert_eq!(wrapped(&["ab cd\nef gh"], 5), "ab cd\nef gh");
        // A word longer than the line is broken; exactly full lines do not add blank ones.
        assert_eq!(wrapped(&["abcdefgh ij"], 4), "abcd\nefgh\nij");
        assert_eq!(wrapped(&["abcd efgh"], 4), "abcd\nefgh");
    }

    #[test]
    fn status_lines_fit_at_words_with_a_space_before_continuations() {
        let line = "[type text and Enter; an empty line continues, /reset starts again, \
                    /help lists commands, /quit or Ctrl-D quits]";
        let out = fit(line, 80);
        assert_eq!(
            out,
            "[type text and Enter; an empty line continues, /reset starts again, /help lists\n \
             commands, /quit or Ctrl-D quits]"
        );
        assert!(out.lines().all(|l| l.chars().count() <= 80));
        assert_eq!(fit("[short]", 80), "[short]");
    }
}
