//! The model trained here (model/ssnail-qa.gguf) on a stock MEGA65 R3: the headless MEGA65
//! without the SSNAIL device, the program and its software core from the D81 (as `make disk`
//! writes it), the image converted as `make disk` converts it. A handful of questions, each
//! after /reset, greedy (`/temp 0`): the answers on the screen are the ids recorded
//! in model/answers/hw.tsv (hardware numerics on ssnail_core, which `make model` wrote), folded
//! as the program prints them, each ended by the EOS ("[end of text]").
//!
//! SSNAIL_QA_GGUF names another GGUF (e.g. one with a weight changed, to see this test fail).

use ssnail_mega65_program::trained_model::{image, recorded_answer};
use ssnail_mega65_program::{answer_and_rest, prg, soft_core_disk, transcript};

use ssnail_core::{Board, Ssnail};
use ssnail_mega65::{KeyScript, Machine, CPU_HZ};

const QUESTIONS: [&str; 3] = ["what is the mega65?", "what is ssnail?", "who trained you?"];

#[test]
fn the_trained_model_answers_on_a_stock_r3_from_the_disk_as_recorded_under_hardware_numerics() {
    let img = image();
    let d81 = soft_core_disk(true, &[("ssnail-qa.ssnail", &img)]);

    let (dev, _) = Ssnail::load_bytes(&img, None).unwrap();
    let want: Vec<String> = QUESTIONS.iter().map(|q| recorded_answer(&dev, q)).collect();

    // greedy, as the model's quality was measured (the program samples at 0.8 unless told)
    let mut keys = String::from("{RETURN}{WAIT 2}/temp 0{RETURN}");
    for (i, q) in QUESTIONS.iter().enumerate() {
        if i > 0 {
            keys.push_str("/reset{RETURN}");
        }
        keys.push_str(&format!("{q}{{RETURN}}"));
    }
    let mut m = Machine::new();
    m.set_board(Board::R3);
    m.mount_d81(d81);
    let (_, entry) = m.load_prg(prg(), None).unwrap();
    m.keys.schedule(&KeyScript::parse(&keys).unwrap(), 0);
    m.start_at(entry);
    for _ in 0..1200 {
        m.run(CPU_HZ / 10);
        if transcript(&m).matches("tokens/s]").count() >= QUESTIONS.len() {
            break;
        }
    }
    let t = transcript(&m);
    assert!(t.contains("Loaded ssnail-qa.ssnail"), "{t}");
    for (q, w) in QUESTIONS.iter().zip(&want) {
        let (answer, rest) = answer_and_rest(&t, q, 0);
        assert_eq!(answer, w.as_str(), "{q:?}:\n{t}");
        assert!(
            rest.starts_with("\n[end of text]"),
            "{q:?}: not ended by the EOS:\n{t}"
        );
        let speed = rest.lines().find(|l| l.contains("tokens/s]")).unwrap_or("");
        eprintln!("{q} ->{w}  {speed}");
    }
}
