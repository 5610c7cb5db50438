//! Shared test text: §10.3's sample lines, and random "word soup" of ASCII
//! pieces that stress the pre-splitters (contractions, digits, whitespace
//! runs, punctuation, `_`). Each test file uses only some of these.
#![allow(dead_code)]

/// §10.3's sample lines (checked after `ssnail_tokenizer::CHECK_SAMPLE`).
pub const SPEC_10_3_LINES: [&str; 10] = [
    "the cat sat on the mat",
    "once upon a time the happy dog",
    "throw the lamp at the troll, playing cats.",
    "",
    "   ",
    "a",
    "the  cat",
    "Throw The LAMP!",
    "cats dogs runs jumped",
    "the\tcat\nsat",
];

const PIECES: [&str; 50] = [
    "the",
    "The",
    "cat",
    "THE",
    "don't",
    "it's",
    "I'm",
    "we'll",
    "you're",
    "12",
    "2024",
    "3.14",
    "a_b",
    "__init__",
    "foo@bar.com",
    "/usr/bin",
    "C:\\x",
    "  ",
    "\t",
    "\n",
    "\n\n",
    " \n ",
    "!!",
    "...",
    "--",
    "(x)",
    "\"q\"",
    "x'",
    "'s",
    "'S",
    "rock'n'roll",
    "e-mail",
    "#1",
    "$5",
    "100%",
    "a+b=c",
    "<s>",
    "[CLS]",
    "hello",
    "world",
    "tokenizer",
    "unbelievable",
    "antidisestablishmentarianism",
    "zzzz",
    "qwxz",
    "Mega65",
    "ssnail",
    "   leading",
    "trailing   ",
    "\t\t",
];

/// `n` deterministic texts of 1–8 pieces, each maybe followed by a space.
pub fn word_soup(n: usize) -> Vec<String> {
    let mut s = 0x1234_5678u64;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    (0..n)
        .map(|_| {
            let k = 1 + (next() % 8) as usize;
            let mut t = String::new();
            for _ in 0..k {
                let r = next();
                t.push_str(PIECES[(r % PIECES.len() as u64) as usize]);
                if r & 0x100 != 0 {
                    t.push(' ');
                }
            }
            t
        })
        .collect()
}
