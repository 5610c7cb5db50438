// Greedy answers of llama.cpp (built from the vendored source) to questions read from stdin,
// one per line, for the committed GGUF: each prompt tokenized with BOS as llama.cpp does, then
// the most likely token again and again until an end-of-generation token or until prompt and
// answer fill CONTEXT tokens (as the SSNAIL script stops). Prints
// per question: the generated ids (comma-separated, the end token included), a tab, the text.
// One model, one thread (fast and deterministic on a loaded machine), the KV memory cleared
// between questions. Built and run by model/llama-cpp/answers.sh.
#include "llama.h"

#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

static void put(llama_batch_ext *b, const llama_token *t, int n, llama_pos pos0) {
    llama_batch_ext_clear(b);
    for (int i = 0; i < n; ++i) {
        int idx = llama_batch_ext_add_token(b, 0, t[i]);
        llama_pos p = pos0 + i;
        llama_batch_ext_set_pos(b, idx, &p);
    }
    llama_batch_ext_set_output_logits(b, n - 1, true);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s MODEL.gguf CONTEXT < questions\n", argv[0]);
        return 2;
    }
    int n_ctx = std::stoi(argv[2]);
    llama_log_set([](ggml_log_level, const char *, void *) {}, nullptr);
    llama_model *model = llama_model_load_from_file(argv[1], llama_model_default_params());
    if (!model) {
        fprintf(stderr, "%s: llama.cpp cannot load it\n", argv[1]);
        return 1;
    }
    const llama_vocab *vocab = llama_model_get_vocab(model);
    llama_context_params cp = llama_context_default_params();
    cp.n_ctx = 128;
    cp.n_batch = 128;
    cp.n_threads = 1;
    cp.n_threads_batch = 1;
    llama_context *ctx = llama_init_from_model(model, cp);
    llama_sampler *smpl = llama_sampler_chain_init(llama_sampler_chain_default_params());
    llama_sampler_chain_add(smpl, llama_sampler_init_greedy());
    llama_batch_ext *batch = llama_batch_ext_init(ctx);
    std::string q;
    while (std::getline(std::cin, q)) {
        llama_memory_clear(llama_get_memory(ctx), true);
        llama_sampler_reset(smpl);
        int n = -llama_tokenize(vocab, q.c_str(), q.size(), nullptr, 0, true, true);
        std::vector<llama_token> toks(n);
        llama_tokenize(vocab, q.c_str(), q.size(), toks.data(), n, true, true);
        put(batch, toks.data(), n, 0);
        int pos = 0, len = n;
        std::string ids, text;
        // as the SSNAIL script: prompt and answer together fill at most the context
        for (int k = 0; k < n_ctx - n; ++k) {
            if (llama_process(ctx, LLAMA_PROCESS_TYPE_DECODE, batch)) {
                fprintf(stderr, "%s: llama.cpp failed to evaluate %s\n", argv[1], q.c_str());
                return 1;
            }
            pos += len;
            llama_token t = llama_sampler_sample(smpl, ctx, -1);
            ids += (ids.empty() ? "" : ",") + std::to_string(t);
            if (llama_vocab_is_eog(vocab, t)) break;
            char buf[128];
            int m = llama_token_to_piece(vocab, t, buf, sizeof buf, 0, true);
            if (m > 0) text.append(buf, m);
            put(batch, &t, 1, pos);
            len = 1;
        }
        printf("%s\t%s\n", ids.c_str(), text.c_str());
        fflush(stdout);
    }
    llama_batch_ext_free(batch);
    llama_sampler_free(smpl);
    llama_free(ctx);
    llama_model_free(model);
    return 0;
}
