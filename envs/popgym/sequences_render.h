// Drawing helpers shared by the POPGym sequence envs' draw(): cards, a progress bar and text.
// POPGym renders none of these envs (HigherLower and CountRecall print text); the pictures are
// recur's, 600x400 pixels, y-up, on the white canvas the caller cleared. Nothing here allocates:
// text is formatted into stack buffers, so rendering stays allocation-free after the first frame.
#pragma once

#include <algorithm>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "envs/render/canvas.h"

namespace recur::envs::popgym::sequences {

inline constexpr int kPictureWidth = 600, kPictureHeight = 400;  // px
inline constexpr int kPictureFps = 4;                            // slow enough to read the cards

// What a card face shows: a suit symbol (suit 0..3: spades, diamonds, clubs, hearts), a rank
// (0..12: ace to king), a colour (0 black, 1 red), or several at once; -1 leaves one out.
struct CardFace {
  int suit = -1;
  int rank = -1;
  int color = -1;
};

// A 140x196 px card centred at `at`.
void draw_card(render::Canvas& canvas, render::Vec2 at, CardFace face);
// The back of a card (a card not shown).
void draw_card_back(render::Canvas& canvas, render::Vec2 at);
// A horizontal bar at the bottom of the picture filled to `fraction` (0..1) of its width.
void draw_progress(render::Canvas& canvas, double fraction);
// A filled bar of `fraction` of `height` px rising from `base`, with its outline.
void draw_column(render::Canvas& canvas, render::Vec2 base, double width, double height,
                 double fraction, render::Color color);

// Text formatted into a stack buffer, centred at `at`.
template <typename... Args>
void draw_text(render::Canvas& canvas, render::Vec2 at, double size,
               fmt::format_string<Args...> format, Args&&... args) {
  char buffer[128];
  const auto out = fmt::format_to_n(buffer, sizeof(buffer), format, std::forward<Args>(args)...);
  canvas.text(at, std::string_view(buffer, std::min(out.size, sizeof(buffer))), size,
              render::kBlack, render::TextAlign::kCenter);
}

// "A", "2", ..., "10", "J", "Q", "K".
std::string_view rank_name(int rank);

}  // namespace recur::envs::popgym::sequences
