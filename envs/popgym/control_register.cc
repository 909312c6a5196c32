#include "envs/popgym/register.h"

namespace recur::envs {

void register_popgym_control(Registry& /*r*/) {}

}  // namespace recur::envs
