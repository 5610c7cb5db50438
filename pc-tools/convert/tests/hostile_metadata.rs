//! Metadata that is present but wrong: a key of the wrong type, or a NaN,
//! negative or zero epsilon or RoPE base, is an error naming the file and
//! key, never a silent default that converts "successfully".

use ssnail_convert::{convert, Options};
use ssnail_gguf::writer::{GgufWriter, MetaValue};
use ssnail_gguf::Gguf;
use ssnail_testkit::models::{self, ModelOpts};

/// The small llama model with one key replaced (or removed with None).
fn llama_with(key: &str, v: Option<MetaValue>) -> Gguf {
    let g = Gguf::from_bytes("m.gguf", models::build(&ModelOpts::llama())).unwrap();
    let mut w = GgufWriter::new();
    for (k, old) in &g.metadata {
        if k != key {
            w.meta(k, MetaValue::from(old));
        }
    }
    if let Some(v) = v {
        w.meta(key, v);
    }
    for t in &g.tensors {
        w.tensor(&t.name, &t.shape, t.ty, g.data(t).to_vec())
            .unwrap();
    }
    Gguf::from_bytes("bad.gguf", w.to_bytes().unwrap()).unwrap()
}

fn convert_err(g: &Gguf) -> String {
    let o = Options {
        ctx: Some(16),
        ..Options::default()
    };
    match convert(g, &o) {
        Ok(_) => panic!("converted"),
        Err(e) => {
            assert!(e.msg.starts_with("bad.gguf: "), "{}", e.msg);
            e.msg
        }
    }
}

#[test]
fn a_context_length_stored_as_a_string_is_an_error_not_2048() {
    let e = convert_err(&llama_with(
        "llama.context_length",
        Some(MetaValue::Str("4096".into())),
    ));
    assert!(
        e.contains("llama.context_length") && e.contains("string"),
        "{e}"
    );
}

#[test]
fn nan_negative_and_zero_epsilon_or_rope_base_are_errors() {
    for key in [
        "llama.attention.layer_norm_rms_epsilon",
        "llama.rope.freq_base",
    ] {
        for v in [f32::NAN, -1e-5, 0.0, f32::INFINITY] {
            let e = convert_err(&llama_with(key, Some(MetaValue::F32(v))));
            assert!(e.contains(key) && e.contains("positive finite"), "{e}");
        }
        // An f64 too large for the f32 the image stores.
        let e = convert_err(&llama_with(key, Some(MetaValue::F64(1e300))));
        assert!(e.contains(key), "{e}");
    }
}

#[test]
fn a_head_count_of_the_wrong_type_is_an_error_not_missing() {
    let e = convert_err(&llama_with(
        "llama.attention.head_count_kv",
        Some(MetaValue::F32(2.0)),
    ));
    assert!(e.contains("head_count_kv") && e.contains("f32"), "{e}");
}

#[test]
fn the_unchanged_model_still_converts() {
    let g = llama_with("nothing.to.replace", None);
    let o = Options {
        ctx: Some(16),
        ..Options::default()
    };
    assert!(convert(&g, &o).is_ok());
}
