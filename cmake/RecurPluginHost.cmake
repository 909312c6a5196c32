# The host side of env plugins (envs/plugin.h): a program that loads plugins exports the recur
# symbols they use, and carries all of recur_core and recur_envs, not only the objects the
# program itself references (a plugin may call an Env or Canvas method no built-in env uses).
#
#   recur_export_for_plugins(my_program)
function(recur_export_for_plugins target)
  set_target_properties(${target} PROPERTIES ENABLE_EXPORTS ON)
  target_link_options(${target} PRIVATE
    "LINKER:--whole-archive" $<TARGET_FILE:recur_envs> $<TARGET_FILE:recur_core>
    "LINKER:--no-whole-archive")
  add_dependencies(${target} recur_envs recur_core)
endfunction()
