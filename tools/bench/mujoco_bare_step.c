// The physical limit of a MuJoCo env step: frame_skip mj_step calls with random controls in the
// actuators' range on one mjData, nothing else (no observation or reward). Built and run by
// tools/bench/mujoco_speed.py against the same libmujoco recur links.
//   mujoco_bare_step MODEL.xml FRAME_SKIP SECONDS [RESET_EVERY]   -> prints env steps/s
// RESET_EVERY (default 1000, a time limit): env steps between mj_resetData calls. The script passes
// the mean episode length of random actions in the env itself, so that the bare loop spends its
// time in the same kind of states (fresh from a reset, falling) and not, say, a Hopper lying on
// the floor in contact for 1000 steps, which costs other physics than the env's short episodes.
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char** argv) {
  if (argc != 4 && argc != 5) {
    fprintf(stderr, "usage: %s MODEL.xml FRAME_SKIP SECONDS [RESET_EVERY]\n", argv[0]);
    return 2;
  }
  char error[1000] = "";
  mjModel* m = mj_loadXML(argv[1], NULL, error, sizeof error);
  if (!m) {
    fprintf(stderr, "%s: %s\n", argv[1], error);
    return 2;
  }
  mjData* d = mj_makeData(m);
  const int skip = atoi(argv[2]);
  const double seconds = atof(argv[3]);
  const long reset_every = argc == 5 ? atol(argv[4]) : 1000;
  if (skip < 1 || seconds <= 0 || reset_every < 1) {
    fprintf(stderr, "FRAME_SKIP and RESET_EVERY must be >= 1, SECONDS > 0\n");
    return 2;
  }
  unsigned seed = 1;
  long steps = 0;
  const double start = now();
  while (now() - start < seconds) {
    for (int k = 0; k < 1000; ++k) {
      for (int i = 0; i < m->nu; ++i) {
        seed = seed * 1664525u + 1013904223u;
        const double u = (seed >> 8) * (1.0 / 16777216.0);
        const mjtNum lo = m->actuator_ctrlrange[2 * i], hi = m->actuator_ctrlrange[2 * i + 1];
        d->ctrl[i] = lo + u * (hi - lo);
      }
      for (int s = 0; s < skip; ++s) mj_step(m, d);
      ++steps;
      if (steps % reset_every == 0) mj_resetData(m, d);  // as an env's episode end would
    }
  }
  printf("%.1f\n", (double)steps / (now() - start));
  mj_deleteData(d);
  mj_deleteModel(m);
  return 0;
}
