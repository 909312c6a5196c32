#include "envs/popgym/register.h"

namespace recur::envs {

void register_popgym_boards(Registry& /*r*/) {}

}  // namespace recur::envs
