//! Reading what the program printed (its serial transcript), and what it should have printed:
//! the same greedy run on the core emulator in hardware numerics, folded to ASCII as the
//! MEGA65 shows it.

use ssnail_core::{NoHost, Numerics, Ssnail};
use ssnail_mega65::Machine;
use ssnail_tokenizer::image::image_memory;
use ssnail_tokenizer::{AsciiFolder, ImageTokenizer};

/// Everything the program wrote to the serial monitor so far.
pub fn transcript(m: &Machine) -> String {
    String::from_utf8_lossy(&m.serial).into_owned()
}

/// The answer the program printed for `prompt`: the text between the echoed prompt line
/// (`> PROMPT`) and the line the program adds after it (`[end of text]`, the tokens/s line).
pub fn answer<'a>(t: &'a str, prompt: &str) -> &'a str {
    nth_answer(t, prompt, 0)
}

/// [`answer`] to the `nth` (from 0) time `prompt` was echoed.
pub fn nth_answer<'a>(t: &'a str, prompt: &str, nth: usize) -> &'a str {
    answer_and_rest(t, prompt, nth).0
}

/// [`nth_answer`] and what the program printed after it, from the newline that ends the answer
/// (`"\n[end of text]\n[prompt: ..."` when the EOS ended it).
pub fn answer_and_rest<'a>(t: &'a str, prompt: &str, nth: usize) -> (&'a str, &'a str) {
    let echo = format!("> {prompt}\n");
    let start = t
        .match_indices(&echo)
        .nth(nth)
        .unwrap_or_else(|| panic!("prompt {prompt:?} not echoed:\n{t}"))
        .0
        + echo.len();
    let rest = &t[start..];
    let end = rest
        .find("\n[")
        .unwrap_or_else(|| panic!("no end of answer:\n{t}"));
    rest.split_at(end)
}

/// What a greedy `ssnail run` prints after the prompt (hardware numerics, as the MEGA65 runs
/// it), folded to ASCII as the MEGA65 shows it.
pub fn reference(img: &[u8], prompt: &str, n: u32) -> String {
    reference_conversation(img, &[(prompt, true)], n)
        .0
        .remove(0)
}

/// What the program does for a conversation, done by ssnail_core in hardware numerics: each
/// `(prompt, first)` a first turn (after /reset) or a continuation, `n` tokens each. Returns
/// the folded answers and the device (its memory is what the MEGA65's attic RAM must hold).
pub fn reference_conversation(img: &[u8], turns: &[(&str, bool)], n: u32) -> (Vec<String>, Ssnail) {
    let mem = image_memory(img).unwrap();
    let tok = ImageTokenizer::new(&mem).unwrap();
    let (mut dev, _) = Ssnail::load_bytes(img, None).unwrap();
    dev.machine.numerics = Numerics::Hardware;
    let mut answers = Vec::new();
    for (prompt, first) in turns {
        let toks = tok.encode(prompt, *first);
        let g = if *first {
            dev.generate(&toks, n, &mut NoHost).unwrap()
        } else {
            dev.continue_generation(&toks, n, &mut NoHost).unwrap()
        };
        let mut text = String::new();
        let mut f = AsciiFolder::new();
        for t in g.tokens {
            f.push(&dev.vocab_piece(t), &mut text);
        }
        answers.push(text);
    }
    (answers, dev)
}
