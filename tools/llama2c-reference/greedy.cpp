// Greedy decoding with llama.cpp, one position at a time, printing for each
// position the five largest logits, as JSON on stdout:
//   {"prompt_ids": [...], "ids": [...], "top": [[[id, logit], ...], ...]}
// "top" has a row per evaluated position (the prompt's, then each generated
// token's but the last); "ids" are the generated tokens, ending early at an
// end-of-generation token as llama-simple does.
//
//   greedy MODEL.gguf N_PREDICT PROMPT
//
// Built and run by tools/llama2c-reference.sh against the llama.cpp of the
// llama-cpp-python sdist; not part of the SSNAIL tools.
#include "llama.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

static void set_one(llama_batch_ext * batch, llama_token tok, llama_pos pos) {
    llama_batch_ext_clear(batch);
    const int32_t idx = llama_batch_ext_add_token(batch, 0, tok);
    llama_batch_ext_set_pos(batch, idx, &pos);
    llama_batch_ext_set_output_logits(batch, idx, true);
}

int main(int argc, char ** argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s MODEL.gguf N_PREDICT PROMPT\n", argv[0]);
        return 2;
    }
    const int n_predict = atoi(argv[2]);
    const std::string prompt = argv[3];
    llama_log_set([](ggml_log_level, const char *, void *) {}, nullptr);
    llama_backend_init();
    llama_model * model = llama_model_load_from_file(argv[1], llama_model_default_params());
    if (!model) { fprintf(stderr, "%s: cannot load\n", argv[1]); return 1; }
    const llama_vocab * vocab = llama_model_get_vocab(model);
    const int n_prompt = -llama_tokenize(vocab, prompt.c_str(), prompt.size(), NULL, 0, true, true);
    std::vector<llama_token> toks(n_prompt);
    llama_tokenize(vocab, prompt.c_str(), prompt.size(), toks.data(), toks.size(), true, true);

    llama_context_params cp = llama_context_default_params();
    cp.n_ctx = n_prompt + n_predict;
    cp.n_batch = 1;
    cp.n_ubatch = 1;
    // One thread: the results do not depend on how the work is split, and
    // ggml's spinning workers crawl on a loaded machine.
    cp.n_threads = 1;
    cp.n_threads_batch = 1;
    llama_context * ctx = llama_init_from_model(model, cp);
    if (!ctx) { fprintf(stderr, "cannot create a context\n"); return 1; }
    const int n_vocab = llama_vocab_n_tokens(vocab);
    llama_batch_ext * batch = llama_batch_ext_init(ctx);

    std::vector<llama_token> out;
    std::string top = "";
    llama_pos pos = 0;
    size_t next = 0;
    llama_token cur = toks[0];
    while ((int) out.size() < n_predict) {
        set_one(batch, cur, pos++);
        if (llama_process(ctx, LLAMA_PROCESS_TYPE_DECODE, batch)) {
            fprintf(stderr, "decode failed at position %d\n", pos - 1);
            return 1;
        }
        const float * lg = llama_get_logits_ith(ctx, -1);
        std::vector<int> order(n_vocab);
        for (int i = 0; i < n_vocab; i++) order[i] = i;
        std::partial_sort(order.begin(), order.begin() + 5, order.end(),
                          [&](int a, int b) { return lg[a] > lg[b] || (lg[a] == lg[b] && a < b); });
        char buf[64];
        top += top.empty() ? "[" : ", [";
        for (int k = 0; k < 5; k++) {
            snprintf(buf, sizeof buf, "%s[%d, %.9g]", k ? ", " : "", order[k], lg[order[k]]);
            top += buf;
        }
        top += "]";
        next++;
        if (next < toks.size()) {
            cur = toks[next];
            continue;
        }
        cur = order[0];
        out.push_back(cur);
        if (llama_vocab_is_eog(vocab, cur)) break;
    }
    printf("{\"prompt_ids\": [");
    for (size_t i = 0; i < toks.size(); i++) printf("%s%d", i ? ", " : "", toks[i]);
    printf("], \"ids\": [");
    for (size_t i = 0; i < out.size(); i++) printf("%s%d", i ? ", " : "", out[i]);
    printf("], \"top\": [%s]}\n", top.c_str());
    llama_batch_ext_free(batch);
    llama_free(ctx);
    llama_model_free(model);
    return 0;
}
