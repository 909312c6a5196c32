#include "envs/popgym/register.h"

namespace recur::envs {

void register_popgym_sequences(Registry& /*r*/) {}

}  // namespace recur::envs
