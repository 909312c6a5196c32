#include "envs/popgym/register.h"

namespace recur::envs {

void register_popgym(Registry& r) {
  register_popgym_sequences(r);
  register_popgym_boards(r);
  register_popgym_control(r);
}

}  // namespace recur::envs
