// Entry point of libvllm_server.so, looked up by name (dlsym) from `vllm serve`.
#pragma once

extern "C" {
// argv[0] is "serve"; returns the process exit status.
int vllm_serve_main(int argc, char** argv);
// argv[0] is "run-batch": OpenAI batch files through the engine in process (run_batch.cpp).
int vllm_run_batch_main(int argc, char** argv);
}
