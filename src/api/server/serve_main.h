// Entry point of libvllm_server.so, looked up by name (dlsym) from `vllm serve`.
#pragma once

extern "C" {
// argv[0] is "serve"; returns the process exit status.
int vllm_serve_main(int argc, char** argv);
}
