/*
 * A stand-in for TensorFlow's side of the pluggable profiler, for tests: it loads a plugin and
 * drives it with the same calls, in the same order, as TensorFlow 2.12-2.21
 * (InitPluginProfiler, PluggableProfilerFactory, PluggableProfiler::CollectData), with a TF_Status
 * of its own whose layout is nothing like profkit's. Built with -rdynamic, its TF_SetStatus and
 * friends are visible to dlsym(RTLD_DEFAULT), as TensorFlow's are inside a TensorFlow process;
 * built without, nobody in the process provides them.
 *
 * Usage: fake_tensorflow PLUGIN SESSIONS OUT_PREFIX
 * Prints one "key value..." line per event; writes each collected buffer to OUT_PREFIX<n>.pb.
 */
#define _DEFAULT_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "profkit_plugin.h"

#define FAKE_MAGIC 0x7446u

struct TF_Status {
  char padding[24]; /* unlike profkit's status: a plugin writing it directly would be caught */
  unsigned magic;
  TF_Code code;
  char message[512];
};

TF_Status *TF_NewStatus(void) {
  TF_Status *s = calloc(1, sizeof *s);
  if (!s) abort();
  s->magic = FAKE_MAGIC;
  return s;
}

void TF_DeleteStatus(TF_Status *s) { free(s); }

void TF_SetStatus(TF_Status *s, TF_Code code, const char *message) {
  if (s->magic != FAKE_MAGIC) abort();
  s->code = code;
  snprintf(s->message, sizeof s->message, "%s", message ? message : "");
}

TF_Code TF_GetCode(const TF_Status *s) { return s->code; }

const char *TF_Message(const TF_Status *s) { return s->message; }

static void busy(double seconds) {
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  volatile unsigned long x = 1;
  do {
    for (int i = 0; i < 100000; i++) x = x * 6364136223846793005ul + 1;
    clock_gettime(CLOCK_MONOTONIC, &b);
  } while ((double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9 < seconds);
}

static void report(const char *what, int session, TF_Status *s) {
  printf("%s %d %d %s\n", what, session, (int)TF_GetCode(s), TF_Message(s));
}

int main(int argc, char **argv) {
  if (argc != 4) return 2;
  int sessions = atoi(argv[2]);
  void *handle = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    printf("dlopen-failed %s\n", dlerror());
    return 1;
  }
  void (*init)(TF_ProfilerRegistrationParams *, TF_Status *) =
      (void (*)(TF_ProfilerRegistrationParams *, TF_Status *))dlsym(handle, "TF_InitProfiler");
  if (!init) return 1;

  /* InitPluginProfiler */
  TF_ProfilerRegistrationParams params = {.struct_size = TF_PROFILER_REGISTRATION_PARAMS_STRUCT_SIZE};
  TP_Profiler profiler = {.struct_size = TP_PROFILER_STRUCT_SIZE};
  TP_ProfilerFns fns = {.struct_size = TP_PROFILER_FNS_STRUCT_SIZE};
  params.major_version = TP_MAJOR;
  params.minor_version = TP_MINOR;
  params.patch_version = TP_PATCH;
  params.profiler = &profiler;
  params.profiler_fns = &fns;
  TF_Status *status = TF_NewStatus();
  init(&params, status);
  report("init", 0, status);
  TF_DeleteStatus(status);
  if (!profiler.device_type || !fns.start || !fns.stop || !fns.collect_data_xspace ||
      !params.destroy_profiler || !params.destroy_profiler_fns)
    return 1;
  printf("device_type %s\n", profiler.device_type);

  /* The factory keeps copies; the moved-from originals are destroyed at once, and twice. */
  TP_Profiler copy = profiler;
  TP_ProfilerFns copy_fns = fns;
  for (int i = 0; i < 2; i++) {
    params.destroy_profiler(&profiler);
    params.destroy_profiler_fns(&fns);
  }

  /* One more session than asked: the last gets a buffer one byte too small. */
  for (int session = 1; session <= sessions + 1; session++) {
    int too_small = session == sessions + 1;
    status = TF_NewStatus();
    copy_fns.start(&copy, status);
    report("start", session, status);
    TF_DeleteStatus(status);
    busy(0.03);
    status = TF_NewStatus();
    copy_fns.stop(&copy, status);
    report("stop", session, status);
    TF_DeleteStatus(status);

    /* CollectData: the size is left uninitialised by TensorFlow; garbage stands in for it. */
    status = TF_NewStatus();
    size_t size = 0xdeadbeefu;
    copy_fns.collect_data_xspace(&copy, NULL, &size, status);
    printf("size %d %zu\n", session, size);
    if (size > 0 && size != 0xdeadbeefu) {
      size_t declared = too_small ? size - 1 : size;
      unsigned char *buffer = calloc(1, size);
      if (!buffer) abort();
      copy_fns.collect_data_xspace(&copy, buffer, &declared, status);
      if (!too_small) {
        char path[4096];
        snprintf(path, sizeof path, "%s%d.pb", argv[3], session);
        FILE *f = fopen(path, "wb");
        if (!f || fwrite(buffer, 1, size, f) != size) abort();
        fclose(f);
      }
      free(buffer);
    }
    report(too_small ? "collect-too-small" : "collect", session, status);
    TF_DeleteStatus(status);
  }
  fflush(stdout);
  return 0;
}
