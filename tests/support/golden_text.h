// Parsing the line-oriented golden data that tools/gen_*_golden.py write from Gymnasium runs
// (numbers separated by spaces, fields separated by '|'), shared by the parity tests.
#pragma once

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

namespace recur::test {

// Every whitespace-separated token of `text` as a double (strtod: "nan", "inf" included).
inline std::vector<double> numbers(const std::string& text) {
  std::istringstream in(text);
  std::vector<double> out;
  for (std::string tok; in >> tok;) out.push_back(std::strtod(tok.c_str(), nullptr));
  return out;
}

// `line` cut at every '|' (the parts keep their spaces).
inline std::vector<std::string> split_bars(const std::string& line) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t bar; (bar = line.find('|', start)) != std::string::npos; start = bar + 1)
    parts.push_back(line.substr(start, bar - start));
  parts.push_back(line.substr(start));
  return parts;
}

}  // namespace recur::test
