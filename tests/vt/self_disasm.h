// This test binary's own machine code, for tests that check what the compiler made of a
// kernel (a prefetch kept, a tile left out of line).
#pragma once

#include <unistd.h>

#include <cstdio>
#include <functional>
#include <string>

namespace vt::cpu {

// Calls fn with every line (newline stripped) `objdump -d -C` prints for this binary.
// False when objdump (binutils) cannot run or fails.
inline bool for_each_self_disasm_line(const std::function<void(const std::string&)>& fn) {
  char exe[4096];
  const ssize_t len = ::readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (len <= 0) return false;
  exe[len] = '\0';
  const std::string cmd = std::string("objdump -d --no-show-raw-insn -C '") + exe + "' 2>/dev/null";
  FILE* f = ::popen(cmd.c_str(), "r");
  if (f == nullptr) return false;
  std::string line;
  char buf[4096];
  while (std::fgets(buf, sizeof(buf), f)) {
    line += buf;
    if (line.back() != '\n') continue;  // a demangled name longer than the buffer
    line.pop_back();
    fn(line);
    line.clear();
  }
  return ::pclose(f) == 0;
}

// A function's first line: "<address> <name>:".
inline bool is_disasm_function_header(const std::string& s) {
  return s.size() >= 2 && s.compare(s.size() - 2, 2, ">:") == 0;
}

}  // namespace vt::cpu
