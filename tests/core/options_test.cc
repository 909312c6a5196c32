#include "core/options.h"

#include <doctest/doctest.h>

#include "core/error.h"

TEST_CASE("OptionReader parses typed values and rejects bad text") {
  recur::Options o;
  o.source = "test.yaml:3";
  o.set("g", "9.81").set("n", "12").set("flag", "true").set("bad", "1.5x");
  recur::OptionReader r(o, "env X");
  CHECK(r.get_double("g", 0) == 9.81);
  CHECK(r.get_int("n", 0) == 12);
  CHECK(r.get_bool("flag", false));
  CHECK(r.get_double("absent", 4.5) == 4.5);
  try {
    r.get_double("bad", 0);
    FAIL("no error");
  } catch (const recur::Error& e) {
    const std::string msg = e.what();
    CHECK(msg.find("'bad'") != std::string::npos);
    CHECK(msg.find("test.yaml:3") != std::string::npos);
  }
  CHECK_THROWS_AS(r.get_int("g", 0), recur::Error);
  CHECK_THROWS_AS(r.get_bool("n", false), recur::Error);
}

TEST_CASE("OptionReader rejects unknown keys with a suggestion") {
  recur::Options o;
  o.set("gravty", "1");
  recur::OptionReader r(o, "env Y");
  r.get_double("gravity", 0);
  try {
    r.reject_unknown();
    FAIL("no error");
  } catch (const recur::Error& e) {
    CHECK(std::string(e.what()).find("Did you mean 'gravity'") != std::string::npos);
  }
}

TEST_CASE("parse_key_value") {
  CHECK(recur::parse_key_value("a=b=c") == std::pair<std::string, std::string>{"a", "b=c"});
  CHECK_THROWS_AS(recur::parse_key_value("novalue"), recur::Error);
  CHECK_THROWS_AS(recur::parse_key_value("=1"), recur::Error);
}

TEST_CASE("OptionReader reads text and choices, naming what is allowed") {
  recur::Options o;
  o.source = "cfg.yaml:9";
  o.set("path", "/tmp/x.xml").set("deck", "suits").set("empty", "").set("bad", "hearts");
  recur::OptionReader r(o, "env Z");
  CHECK(r.get_string("path", "") == "/tmp/x.xml");
  CHECK(r.get_string("absent", "dflt") == "dflt");
  CHECK_THROWS_WITH_AS(r.get_string("empty", "x"), doctest::Contains("'empty'"), recur::Error);
  CHECK(r.get_choice("deck", "colors", {"colors", "suits", "ranks"}) == "suits");
  CHECK(r.get_choice("none", "colors", {"colors", "suits"}) == "colors");
  CHECK_THROWS_WITH_AS(r.get_choice("bad", "colors", {"colors", "suits", "ranks"}),
                       doctest::Contains("colors, suits, ranks"), recur::Error);
}

TEST_CASE("layered: the options on top win, and the source names both") {
  recur::Options base, over, none;
  base.source = "ckpt.safetensors";
  base.set("g", "10").set("m", "1");
  over.source = "--option";
  over.set("g", "12").set("l", "2");
  const recur::Options both = recur::layered(base, over);
  CHECK(both.values == std::map<std::string, std::string>{{"g", "12"}, {"l", "2"}, {"m", "1"}});
  CHECK(both.source == "ckpt.safetensors and --option");
  // Nothing on top: the base as it was, its source alone.
  const recur::Options same = recur::layered(base, none);
  CHECK(same.values == base.values);
  CHECK(same.source == "ckpt.safetensors");
}
