// The physical limit of a MuJoCo env step: frame_skip mj_step calls with random controls in the
// actuators' range on one mjData, nothing else (no observation, reward or reset). Built and run
// by tools/bench/mujoco_speed.py against the same libmujoco recur links.
//   mujoco_bare_step MODEL.xml FRAME_SKIP SECONDS   -> prints env steps/s
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
  if (argc != 4) {
    fprintf(stderr, "usage: %s MODEL.xml FRAME_SKIP SECONDS\n", argv[0]);
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
      if (steps % 1000 == 0) mj_resetData(m, d);  // as an env's time limit would
    }
  }
  printf("%.1f\n", (double)steps / (now() - start));
  mj_deleteData(d);
  mj_deleteModel(m);
  return 0;
}
