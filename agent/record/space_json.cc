#include "agent/record/space_json.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string_view>

#include <fmt/format.h>

#include "core/error.h"

namespace recur::agent::record {

std::string python_float_repr(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  // Shortest round-trip digits in scientific form ("d.ddde+XX"), then laid out as CPython's
  // float_repr_style 'short' does: positional when -4 <= exponent < 16, else scientific.
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::scientific);
  RECUR_ASSERT(res.ec == std::errc());
  std::string_view sci(buf, static_cast<size_t>(res.ptr - buf));
  std::string out;
  if (sci.front() == '-') {
    out.push_back('-');
    sci.remove_prefix(1);
  }
  const size_t e = sci.find('e');
  std::string digits(sci.substr(0, e));
  if (digits.size() > 1) digits.erase(1, 1);  // drop the '.'
  const int exponent = std::atoi(std::string(sci.substr(e + 1)).c_str());
  // (std::string::append throughout: GCC 12 flags operator+ chains with a false -Wrestrict.)
  if (exponent >= -4 && exponent < 16) {
    if (exponent < 0) {
      out.append("0.").append(static_cast<size_t>(-exponent - 1), '0').append(digits);
    } else {
      const size_t int_digits = static_cast<size_t>(exponent) + 1;
      if (digits.size() <= int_digits) {
        out.append(digits).append(int_digits - digits.size(), '0').append(".0");
      } else {
        out.append(digits, 0, int_digits).append(".").append(digits, int_digits);
      }
    }
    return out;
  }
  out.append(digits, 0, 1);
  if (digits.size() > 1) out.append(".").append(digits, 1);
  out += fmt::format("e{}{:02d}", exponent < 0 ? '-' : '+', std::abs(exponent));
  return out;
}

std::string python_json_string(const std::string& text) {
  std::string out = "\"";
  auto escape_unit = [&](uint32_t u) { out += fmt::format("\\u{:04x}", u); };
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  for (size_t i = 0; i < n;) {
    const unsigned char c = s[i];
    if (c < 0x80) {
      switch (c) {
        case '"':
          out += "\\\"";
          break;
        case '\\':
          out += "\\\\";
          break;
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        case '\t':
          out += "\\t";
          break;
        case '\b':
          out += "\\b";
          break;
        case '\f':
          out += "\\f";
          break;
        default:
          if (c < 0x20 || c == 0x7f)
            escape_unit(c);
          else
            out.push_back(static_cast<char>(c));
      }
      ++i;
      continue;
    }
    // Decode one UTF-8 sequence; anything malformed is one U+FFFD per byte.
    int len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 0;
    uint32_t cp = len == 4 ? c & 0x07u : len == 3 ? c & 0x0fu : c & 0x1fu;
    bool ok = len > 0 && c < 0xf5 && i + static_cast<size_t>(len) <= n;
    for (int k = 1; ok && k < len; ++k) {
      const unsigned char cc = s[i + static_cast<size_t>(k)];
      ok = (cc & 0xc0) == 0x80;
      cp = (cp << 6) | (cc & 0x3fu);
    }
    ok = ok && !(len == 2 && cp < 0x80) && !(len == 3 && cp < 0x800) &&
         !(len == 4 && (cp < 0x10000 || cp > 0x10ffff)) && !(cp >= 0xd800 && cp <= 0xdfff);
    if (!ok) {
      escape_unit(0xfffd);
      ++i;
      continue;
    }
    if (cp >= 0x10000) {
      cp -= 0x10000;
      escape_unit(0xd800 + (cp >> 10));
      escape_unit(0xdc00 + (cp & 0x3ff));
    } else {
      escape_unit(cp);
    }
    i += static_cast<size_t>(len);
  }
  return out + "\"";
}

namespace {
// numpy's ndarray.tolist() of a (d0, d1, ...) array: nested lists, row-major.
void nested_list(const std::vector<float>& values, const std::vector<int>& shape, size_t dim,
                 size_t& next, std::string& out) {
  if (dim == shape.size()) {
    out += python_float_repr(static_cast<double>(values[next++]));
    return;
  }
  out.push_back('[');
  for (int i = 0; i < shape[dim]; ++i) {
    if (i) out += ", ";
    nested_list(values, shape, dim + 1, next, out);
  }
  out.push_back(']');
}
}  // namespace

std::string space_to_minari_json(const envs::Space& space) {
  if (space.is_discrete())
    return fmt::format(R"({{"type": "Discrete", "dtype": "int64", "start": 0, "n": {}}})",
                       space.n());
  std::string shape = "[";
  for (size_t i = 0; i < space.shape().size(); ++i)
    shape += (i ? ", " : "") + std::to_string(space.shape()[i]);
  shape += "]";
  std::string low, high;
  size_t next = 0;
  nested_list(space.low(), space.shape(), 0, next, low);
  next = 0;
  nested_list(space.high(), space.shape(), 0, next, high);
  return fmt::format(R"({{"type": "Box", "dtype": "float32", "shape": {}, "low": {}, "high": {}}})",
                     shape, low, high);
}

}  // namespace recur::agent::record
