//! The chat block (§2.6): the GGUF's `tokenizer.chat_template` rendered
//! once, with marker messages, into the token ids a host puts around each
//! typed line.
//!
//! The template is Jinja; minijinja (with minijinja-contrib's Python string
//! methods, which Hugging Face templates call) renders it, as llama.cpp's
//! `--jinja` mode renders it with its own engine. Three renderings give
//! FIRST, SUFFIX, END and PREFIX (see §2.6); the pieces are then tokenized
//! with special tokens parsed, as llama.cpp tokenizes a formatted prompt.

use minijinja::{context, Environment, Error, ErrorKind};
use ssnail_format::chatblock::{ChatBlock, MAX_SEQ};
use ssnail_tokenizer::{GgufTokenizer, TokModel};

/// Marker messages: private-use characters no template changes or trims.
const U1: &str = "\u{E000}user-1\u{E000}";
const A1: &str = "\u{E000}assistant-1\u{E000}";
const U2: &str = "\u{E000}user-2\u{E000}";

/// The template family, by the markers llama.cpp's detection looks for,
/// found in the rendered pieces (shown to users; the block does not depend on it).
pub fn family(p: &Pieces) -> &'static str {
    let text = format!("{}{}{}", p.first, p.suffix, p.end);
    let has = |s: &str| text.contains(s);
    if has("<|im_start|>") {
        "chatml"
    } else if has("[INST]") {
        "llama2"
    } else if has("<|start_header_id|>") && has("<|end_header_id|>") {
        "llama3"
    } else if has("<|user|>") && has("<|endoftext|>") {
        "zephyr"
    } else {
        "template"
    }
}

/// Render the template for `messages` (role, content).
fn render(
    template: &str,
    messages: &[(&str, &str)],
    add_generation_prompt: bool,
    bos: &str,
    eos: &str,
) -> Result<String, Error> {
    let mut env = Environment::new();
    // As Hugging Face's apply_chat_template sets up Jinja.
    env.set_syntax(
        minijinja::syntax::SyntaxConfig::builder()
            .trim_blocks(true)
            .lstrip_blocks(true)
            .build()?,
    );
    minijinja_contrib::add_to_environment(&mut env);
    env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
    env.add_function("raise_exception", |msg: String| -> Result<String, Error> {
        Err(Error::new(ErrorKind::InvalidOperation, msg))
    });
    env.add_template("chat", template)?;
    let msgs: Vec<_> = messages
        .iter()
        .map(|&(role, content)| context! { role => role, content => content })
        .collect();
    env.get_template("chat")?.render(context! {
        messages => msgs,
        add_generation_prompt => add_generation_prompt,
        bos_token => bos,
        eos_token => eos,
    })
}

/// The four pieces of a template as text.
#[derive(Debug, PartialEq, Eq)]
pub struct Pieces {
    pub first: String,
    pub prefix: String,
    pub suffix: String,
    pub end: String,
}

/// Split a template into its pieces by rendering it three times (§2.6).
pub fn pieces(template: &str, bos: &str, eos: &str) -> Result<Pieces, String> {
    let err = |e: Error| format!("the chat template does not render: {e}");
    let one = render(template, &[("user", U1)], true, bos, eos).map_err(err)?;
    let two = render(
        template,
        &[("user", U1), ("assistant", A1)],
        false,
        bos,
        eos,
    )
    .map_err(err)?;
    let three = render(
        template,
        &[("user", U1), ("assistant", A1), ("user", U2)],
        true,
        bos,
        eos,
    )
    .map_err(err)?;
    let nest = || "the chat template's turns do not follow one another".to_string();
    let (first, suffix) = one.split_once(U1).ok_or_else(nest)?;
    let (before_a1, end) = two.split_once(A1).ok_or_else(nest)?;
    // The reply must follow the turn as the generation prompt opened it; a
    // space before the reply (Llama-2's) is the model's to write.
    match before_a1.strip_prefix(&format!("{first}{U1}{suffix}")) {
        Some(gap) if gap.trim().is_empty() => {}
        _ => return Err(nest()),
    }
    let (prefix, after_u2) = three
        .strip_prefix(two.as_str())
        .and_then(|rest| rest.split_once(U2))
        .ok_or_else(nest)?;
    if after_u2 != suffix {
        return Err(nest());
    }
    Ok(Pieces {
        first: first.to_string(),
        prefix: prefix.to_string(),
        suffix: suffix.to_string(),
        // Formatting before the end-of-turn token (Llama-2's " </s>") is not the model's to write.
        end: end.trim_start().to_string(),
    })
}

/// The chat block of a GGUF vocabulary and template, or why it has none.
pub fn block(template: &str, tok: &GgufTokenizer) -> Result<ChatBlock, String> {
    let v = &tok.vocab;
    let text_of = |id: Option<u32>| {
        id.and_then(|i| v.tokens.get(i as usize))
            .cloned()
            .unwrap_or_default()
    };
    let p = pieces(template, &text_of(v.decoder_bos()), &text_of(v.eos_id))?;
    // The image tokenizer gives typed SentencePiece text its own leading space.
    let spm_space = v.model == TokModel::Spm && v.add_space_prefix.unwrap_or(true);
    let opener = |s: &str| -> String {
        match s.strip_suffix(' ') {
            Some(t) if spm_space => t.to_string(),
            _ => s.to_string(),
        }
    };
    let is_control = |id: u32| tok.parses_as_special(id);
    let mut first = tok.encode_special(&opener(&p.first), false);
    if let Some(bos) = tok.begin() {
        if first.first() != Some(&bos) {
            first.insert(0, bos);
        }
    }
    let suffix = tok.encode_special(&p.suffix, true);
    let end = tok.encode_special(&p.end, true);
    let after_special = end.last().is_some_and(|&t| is_control(t));
    let prefix = tok.encode_special(&opener(&p.prefix), !after_special);
    match end.first() {
        Some(&t) if is_control(t) => {}
        _ => {
            return Err(format!(
                "the chat template's reply does not end with a special token ({:?})",
                p.end
            ))
        }
    }
    let b = ChatBlock {
        name: family(&p).to_string(),
        first,
        prefix,
        suffix,
        end,
    };
    for (what, s) in [
        ("first turn's prefix", &b.first),
        ("turn prefix", &b.prefix),
        ("turn suffix", &b.suffix),
        ("end of reply", &b.end),
    ] {
        if s.len() > MAX_SEQ {
            return Err(format!(
                "the chat template's {what} is {} tokens, more than the {MAX_SEQ} an image holds",
                s.len()
            ));
        }
    }
    Ok(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHATML: &str = "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";
    const LLAMA2: &str = "{{ bos_token }}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'].strip() + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ ' '  + message['content'].strip() + ' ' + eos_token }}{% endif %}{% endfor %}";
    const LLAMA3: &str = "{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}{{ content }}{% endfor %}{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}";
    const ZEPHYR: &str = "{% for message in messages %}\n{% if message['role'] == 'user' %}\n{{ '<|user|>\n' + message['content'] + eos_token }}\n{% elif message['role'] == 'system' %}\n{{ '<|system|>\n' + message['content'] + eos_token }}\n{% elif message['role'] == 'assistant' %}\n{{ '<|assistant|>\n'  + message['content'] + eos_token }}\n{% endif %}\n{% if loop.last and add_generation_prompt %}\n{{ '<|assistant|>' }}\n{% endif %}\n{% endfor %}";

    #[test]
    fn chatml_splits_into_the_user_opener_the_assistant_opener_and_im_end() {
        let p = pieces(CHATML, "<s>", "</s>").unwrap();
        assert_eq!(p.first, "<|im_start|>user\n");
        assert_eq!(p.suffix, "<|im_end|>\n<|im_start|>assistant\n");
        assert_eq!(p.end, "<|im_end|>\n");
        assert_eq!(p.prefix, "<|im_start|>user\n");
        assert_eq!(family(&p), "chatml");
    }

    #[test]
    fn llama2_starts_with_bos_and_ends_a_reply_with_eos() {
        let p = pieces(LLAMA2, "<s>", "</s>").unwrap();
        assert_eq!(p.first, "<s>[INST] ");
        assert_eq!(p.suffix, " [/INST]");
        assert_eq!(p.end, "</s>");
        assert_eq!(p.prefix, "[INST] ");
        assert_eq!(family(&p), "llama2");
    }

    #[test]
    fn llama3_and_zephyr_render_with_their_headers() {
        let p = pieces(LLAMA3, "<|begin_of_text|>", "<|end_of_text|>").unwrap();
        assert_eq!(
            p.first,
            "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\n"
        );
        assert_eq!(
            p.suffix,
            "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"
        );
        assert_eq!(p.end, "<|eot_id|>");
        assert_eq!(p.prefix, "<|start_header_id|>user<|end_header_id|>\n\n");
        assert_eq!(family(&p), "llama3");
        let z = pieces(ZEPHYR, "<s>", "<|endoftext|>").unwrap();
        assert_eq!(z.first, "<|user|>\n");
        assert!(z.suffix.starts_with("<|endoftext|>"), "{:?}", z.suffix);
        assert!(z.suffix.contains("<|assistant|>"), "{:?}", z.suffix);
        assert_eq!(family(&z), "zephyr");
    }

    #[test]
    fn a_template_that_does_not_render_or_nest_is_refused_with_why() {
        let e = pieces("{% for m in messages %}{{ m.content", "<s>", "</s>").unwrap_err();
        assert!(e.contains("does not render"), "{e}");
        // Repeats the first message: the turns do not nest.
        let e = pieces(
            "{{ messages[0].content }}{% if add_generation_prompt %}A:{% endif %}",
            "<s>",
            "</s>",
        )
        .unwrap_err();
        assert!(e.contains("do not follow"), "{e}");
    }
}
