//! §10.3 on real converted images: the §10 test models converted for 8, 64
//! and 72 MB (and with the SDRAM/HyperRAM boundary moved to $800E001); the
//! image tokenizer reads the tables the converter placed and must equal
//! the reference GGUF tokenizer, and those tables must be ImageTables'.

mod common;

use ssnail_convert::{convert, Options};
use ssnail_format::image::BASE;
use ssnail_testkit::models::{self, ModelOpts};
use ssnail_tokenizer::image::image_memory;
use ssnail_tokenizer::{GgufTokenizer, ImageTables, ImageTokenizer, TokModel, Vocab};

fn check(opts: ModelOpts) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.gguf");
    models::write(&path, &models::build(&opts));
    let g = ssnail_gguf::Gguf::open(&path).unwrap();
    let vocab = Vocab::from_gguf(&g).unwrap();
    let tables = ImageTables::build(&vocab);
    let reference = GgufTokenizer::new(vocab.clone()).unwrap();
    let layouts = [
        (8.0, None),
        (64.0, None),
        (72.0, None),
        (72.0, Some(0x800_E001)),
    ];
    for (mem_mb, boundary) in layouts {
        let mut o = Options {
            ctx: Some(32),
            mem_mb,
            ..Options::default()
        };
        if let Some(b) = boundary {
            o.boundary = b;
        }
        let img = convert(&g, &o).unwrap();
        let mem = image_memory(&img.image).unwrap();
        let tok = ImageTokenizer::new(&mem).unwrap();

        // The placed tables are exactly ImageTables' bytes.
        let at = |addr: u32, len: usize| &mem[(addr - BASE) as usize..][..len];
        assert_eq!(
            at(img.header.vocab, tables.vocab_table.len()),
            tables.vocab_table
        );
        assert_eq!(at(tok.block.index, tables.index.len()), tables.index);
        assert_eq!(
            at(tok.block.priority, tables.priority.len()),
            tables.priority
        );
        assert_eq!(at(tok.block.byte_table, 1024), tables.byte_table);
        let mut block = tok.block;
        (block.index, block.priority, block.byte_table) = (0, 0, 0);
        assert_eq!(block, tables.block);

        let lines = ssnail_tokenizer::CHECK_SAMPLE
            .lines()
            .chain(common::SPEC_10_3_LINES);
        let mut n = 0;
        for line in lines {
            assert_eq!(
                tok.encode(line, true),
                reference.encode(line, true),
                "{} {mem_mb} MB: {line:?}",
                opts.arch
            );
            if vocab.model != TokModel::WordPiece {
                assert_eq!(tok.encode(line, false), reference.encode(line, false));
            }
            n += 1;
        }
        println!(
            "{} {mem_mb} MB boundary {boundary:?}: {n}/{n} lines identical",
            opts.arch
        );
    }
}

#[test]
fn llama_images() {
    check(ModelOpts::llama());
}

#[test]
fn gpt2_images() {
    check(ModelOpts::gpt2());
    check(ModelOpts {
        add_bos: Some(true),
        ..ModelOpts::gpt2()
    });
}

#[test]
fn bert_images() {
    check(ModelOpts::bert());
}
