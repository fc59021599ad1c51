// Reference throughput probe written against llama.cpp's C API, linked with the very
// static libraries cargo built for llama-cpp-sys-2 (same source, same flags). It follows
// the measurement of llama.cpp's `llama-batched-bench` (whose source the crate does not
// vendor): fill NPL sequences with NPP prompt tokens each, decode them in batches of
// n_batch (t_pp), then NTG steps that decode one token per sequence (t_tg); no sampling.
// Output: one JSON line per NPL with speed_pp and speed_tg in tokens/s.
//
// usage: llama_batched_bench -m MODEL -c N_CTX -b N_BATCH -npp N -ntg N -npl A,B,.. -t THREADS [-kvu 0|1]
#include "llama.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

static double now_s() {
    using namespace std::chrono;
    return duration<double>(steady_clock::now().time_since_epoch()).count();
}

static void quiet(ggml_log_level, const char *, void *) {}

int main(int argc, char ** argv) {
    std::string model_path;
    int n_ctx = 4096, n_batch = 512, npp = 128, ntg = 128, threads = 2, kvu = 1;
    std::vector<int> npl_list = {1};
    for (int i = 1; i + 1 < argc; i += 2) {
        std::string k = argv[i], v = argv[i + 1];
        if (k == "-m") model_path = v;
        else if (k == "-c") n_ctx = std::atoi(v.c_str());
        else if (k == "-b") n_batch = std::atoi(v.c_str());
        else if (k == "-npp") npp = std::atoi(v.c_str());
        else if (k == "-ntg") ntg = std::atoi(v.c_str());
        else if (k == "-t") threads = std::atoi(v.c_str());
        else if (k == "-kvu") kvu = std::atoi(v.c_str());
        else if (k == "-npl") {
            npl_list.clear();
            std::stringstream ss(v);
            std::string item;
            while (std::getline(ss, item, ',')) npl_list.push_back(std::atoi(item.c_str()));
        } else { fprintf(stderr, "unknown flag %s\n", k.c_str()); return 2; }
    }
    int max_npl = 1;
    for (int n : npl_list) max_npl = n > max_npl ? n : max_npl;
    if (!getenv("HRL_LLAMA_LOG")) llama_log_set(quiet, nullptr);
    llama_backend_init();
    llama_model_params mp = llama_model_default_params();
    llama_model * model = llama_model_load_from_file(model_path.c_str(), mp);
    if (!model) { fprintf(stderr, "cannot load %s\n", model_path.c_str()); return 1; }
    llama_context_params cp = llama_context_default_params();
    cp.n_ctx = n_ctx;
    cp.n_batch = n_batch;
    cp.n_ubatch = n_batch;
    cp.n_seq_max = max_npl;
    cp.n_threads = threads;
    cp.n_threads_batch = threads;
    cp.kv_unified = kvu != 0;
    llama_context * ctx = llama_init_from_model(model, cp);
    if (!ctx) { fprintf(stderr, "cannot create context\n"); return 1; }
    const int n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));
    llama_batch batch = llama_batch_init(n_batch > max_npl ? n_batch : max_npl, 0, 1);
    unsigned rng = 12345;
    auto tok = [&]() { rng = rng * 1103515245u + 12345u; return (llama_token) ((rng >> 8) % n_vocab); };
    auto add = [&](llama_token t, llama_pos p, llama_seq_id s, bool logits) {
        int i = batch.n_tokens++;
        batch.token[i] = t; batch.pos[i] = p; batch.n_seq_id[i] = 1; batch.seq_id[i][0] = s; batch.logits[i] = logits;
    };
    // Decode `batch` in views of at most n_batch tokens.
    auto decode_all = [&]() -> bool {
        for (int i = 0; i < batch.n_tokens; i += n_batch) {
            int n = std::min(n_batch, batch.n_tokens - i);
            llama_batch view = { n, batch.token + i, nullptr, batch.pos + i, batch.n_seq_id + i, batch.seq_id + i, batch.logits + i };
            if (llama_decode(ctx, view) != 0) return false;
        }
        llama_synchronize(ctx);
        return true;
    };
    // Warm-up.
    batch.n_tokens = 0;
    for (int i = 0; i < 16; i++) add(tok(), i, 0, i == 15);
    if (!decode_all()) { fprintf(stderr, "warm-up decode failed\n"); return 1; }
    for (int npl : npl_list) {
        if (npl * (npp + ntg) > n_ctx) { fprintf(stderr, "npl %d does not fit n_ctx\n", npl); continue; }
        llama_memory_clear(llama_get_memory(ctx), true);
        std::vector<llama_token> prompt_batch;
        const double t0 = now_s();
        batch.n_tokens = 0;
        for (int j = 0; j < npl; j++)
            for (int i = 0; i < npp; i++) {
                if (batch.n_tokens == n_batch) { if (!decode_all()) return 1; batch.n_tokens = 0; }
                add(tok(), i, j, i == npp - 1);
            }
        if (batch.n_tokens > 0 && !decode_all()) { fprintf(stderr, "prompt decode failed\n"); return 1; }
        const double t1 = now_s();
        for (int g = 0; g < ntg; g++) {
            batch.n_tokens = 0;
            for (int j = 0; j < npl; j++) add(tok(), npp + g, j, true);
            if (!decode_all()) { fprintf(stderr, "generation decode failed\n"); return 1; }
        }
        const double t2 = now_s();
        const double t_pp = t1 - t0, t_tg = t2 - t1;
        printf("{\"n_kv_max\": %d, \"n_batch\": %d, \"pp\": %d, \"tg\": %d, \"pl\": %d, \"kv_unified\": %d, "
               "\"t_pp\": %.4f, \"speed_pp\": %.2f, \"t_tg\": %.4f, \"speed_tg\": %.2f}\n",
               n_ctx, n_batch, npp, ntg, npl, kvu, t_pp, npl * npp / t_pp, t_tg, npl * ntg / t_tg);
        fflush(stdout);
    }
    llama_batch_free(batch);
    llama_free(ctx);
    llama_model_free(model);
    llama_backend_free();
    return 0;
}
