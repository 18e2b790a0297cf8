/*
 * A profiler plugin in C, correct by default and broken in one way per MODE_* define, for the
 * tests of profkit's host and checker. Built by the tests with:
 *   cc -shared -fPIC -I include -DMODE_<NAME> tests/plugins/broken.c -o libbroken_<name>.so
 *
 * It calls TF_SetStatus directly, leaving it undefined, as most C plugins do: it loads only where
 * the loading process provides it (TensorFlow, or profkit's host).
 *
 * HANG hangs in session 2's start after writing its pid to $PROFKIT_TEST_PIDFILE, if set.
 * Modes against the checker itself: FORK_DAEMON (TF_InitProfiler forks a process that keeps the
 * standard streams open and writes its pid to $PROFKIT_TEST_PIDFILE), FORGE (an illegal device
 * type, and passing results in the checker's old line format written to every descriptor, from
 * TF_InitProfiler and from a destructor), FLOOD ($PROFKIT_TEST_FLOOD_MIB MiB, default 512, on
 * stdout and stderr without a newline), SIZE_MAX (the size call answers SIZE_MAX).
 *
 * Every session returns a small XSpace: plane "/device:CUSTOM:0", one line, one event per
 * session so far, encoded by hand below.
 */
#define _DEFAULT_SOURCE /* clock_gettime, usleep under -std=c11 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "profkit_plugin.h"

/* ---- a tiny protobuf writer ---- */

typedef struct {
  uint8_t data[4096];
  size_t len;
} Buf;

static void put_byte(Buf *b, uint8_t v) {
  if (b->len < sizeof b->data) b->data[b->len++] = v;
}
static void put_varint(Buf *b, uint64_t v) {
  while (v >= 0x80) {
    put_byte(b, (uint8_t)(v | 0x80));
    v >>= 7;
  }
  put_byte(b, (uint8_t)v);
}
static void put_uint(Buf *b, int field, uint64_t v) {
  put_varint(b, (uint64_t)field << 3);
  put_varint(b, v);
}
static void put_bytes(Buf *b, int field, const void *p, size_t n) {
  put_varint(b, ((uint64_t)field << 3) | 2);
  put_varint(b, n);
  for (size_t i = 0; i < n; i++) put_byte(b, ((const uint8_t *)p)[i]);
}
static void put_msg(Buf *b, int field, const Buf *m) { put_bytes(b, field, m->data, m->len); }

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- state: globals, never the TP_Profiler that the core copies ---- */

static int sessions;
static int running;
static Buf pending; /* the serialised XSpace between the two collect calls */
static int have_pending;
static int destroyed;
static void *volatile leaked;

static void encode_space(Buf *out, int events, int with_events) {
  Buf plane = {0}, line = {0}, md = {0}, entry = {0};
  memset(out, 0, sizeof *out);
  if (!with_events) {
    /* An XSpace with only a host name: bytes, but nothing recorded. */
    put_bytes(out, 4, "idle-host", 9);
    return;
  }
  put_uint(&line, 1, 1);                          /* XLine.id */
  put_bytes(&line, 2, "c-line", 6);               /* XLine.name */
  put_uint(&line, 3, now_ns());                   /* XLine.timestamp_ns, absolute */
  for (int i = 0; i < events; i++) {
    Buf ev = {0};
    put_uint(&ev, 1, 1);                          /* XEvent.metadata_id */
    put_uint(&ev, 2, (uint64_t)i * 2000);         /* XEvent.offset_ps */
    put_uint(&ev, 3, 1000);                       /* XEvent.duration_ps */
    put_msg(&line, 4, &ev);                       /* XLine.events */
  }
  put_uint(&md, 1, 1);                            /* XEventMetadata.id */
  put_bytes(&md, 2, "c-event", 7);                /* XEventMetadata.name */
  put_uint(&entry, 1, 1);                         /* map key */
  put_msg(&entry, 2, &md);                        /* map value */
  put_bytes(&plane, 2, "/device:CUSTOM:0", 16);   /* XPlane.name */
  put_msg(&plane, 3, &line);                      /* XPlane.lines */
  put_msg(&plane, 4, &entry);                     /* XPlane.event_metadata */
  put_msg(out, 1, &plane);                        /* XSpace.planes */
}

/* Writes this process's pid to $PROFKIT_TEST_PIDFILE, if set: how a test finds it. */
__attribute__((unused)) static void write_pidfile(void) {
  const char *path = getenv("PROFKIT_TEST_PIDFILE");
  if (!path) return;
  char text[32];
  int n = snprintf(text, sizeof text, "%ld\n", (long)getpid());
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return;
  if (n > 0 && write(fd, text, (size_t)n) < 0) n = 0;
  close(fd);
}

/* ---- the profiler functions ---- */

static void p_start(const TP_Profiler *p, TF_Status *status) {
  (void)p;
#if defined(MODE_DESTROY_FREES)
  if (destroyed) {
    TF_SetStatus(status, TF_FAILED_PRECONDITION, "state freed by destroy_profiler");
    return;
  }
#endif
#if defined(MODE_NOT_RESTARTABLE)
  if (sessions >= 1) {
    TF_SetStatus(status, TF_INTERNAL, "this profiler starts only once");
    return;
  }
#endif
#if defined(MODE_ABORT)
  if (sessions == 2) abort();
#endif
#if defined(MODE_HANG)
  if (sessions == 2) {
    write_pidfile();
    for (;;) sleep(1000);
  }
#endif
#if defined(MODE_LEAK)
  {
    /* 2 MiB per session, touched so it is resident, never freed. */
    size_t n = 2u << 20;
    char *leak = malloc(n);
    if (leak) memset(leak, 1 + sessions, n);
    leaked = leak; /* kept reachable, so the compiler cannot drop the allocation */
  }
#endif
  (void)status;
  running = 1;
  have_pending = 0;
  sessions++;
}

static void p_stop(const TP_Profiler *p, TF_Status *status) {
  (void)p;
  (void)status;
#if defined(MODE_SLOW)
  if (sessions == 2) usleep(1300 * 1000);
#endif
  running = 0;
}

static void p_collect(const TP_Profiler *p, uint8_t *buffer, size_t *size, TF_Status *status) {
  (void)p;
  (void)status;
#if defined(MODE_CRASH)
  if (sessions == 3) {
    volatile int *nowhere = NULL;
    *nowhere = 42; /* SIGSEGV */
  }
#endif
  if (buffer == NULL) {
#if defined(MODE_SIZE_MAX)
    *size = SIZE_MAX;
    return;
#endif
#if defined(MODE_NO_SIZE)
    return; /* never writes the size */
#endif
    if (!have_pending) {
      encode_space(&pending, sessions, 1);
#if defined(MODE_EMPTY_BYTES)
      encode_space(&pending, 0, 0);
#endif
      have_pending = 1;
    }
    *size = pending.len;
    return;
  }
  if (!have_pending) {
    *size = 0;
    return;
  }
#if defined(MODE_SIZE_MISMATCH)
  /* Serialises again on the second call, with fewer events: a different (smaller) size. */
  if (sessions > 1) encode_space(&pending, sessions - 1, 1);
  else encode_space(&pending, 0, 0);
#endif
  if (*size < pending.len) {
#if defined(MODE_IGNORE_SMALL)
    memcpy(buffer, pending.data, pending.len); /* writes past the end */
    *size = pending.len;
    return;
#elif defined(MODE_ACCEPT_SMALL)
    return; /* silently OK, buffer left as it is */
#else
    TF_SetStatus(status, TF_FAILED_PRECONDITION, "buffer too small");
    return;
#endif
  }
  memcpy(buffer, pending.data, pending.len);
  *size = pending.len;
  have_pending = 0;
}

static void p_destroy(TP_Profiler *p) {
  (void)p;
  (void)destroyed;
  (void)leaked;
#if defined(MODE_DESTROY_FREES)
  destroyed = 1;
#endif
}

static void p_destroy_fns(TP_ProfilerFns *f) { (void)f; }

static TP_Profiler own_profiler;

/* ---- modes against the checker ---- */

#if defined(MODE_FORK_DAEMON)
static void fork_daemon(void) {
  pid_t pid = fork();
  if (pid != 0) return;
  write_pidfile();
  sleep(30); /* holds the inherited stdout and stderr */
  _exit(0);
}
#endif

#if defined(MODE_FLOOD)
static char flood_chunk[1 << 20];
static void flood(void) {
  const char *mib = getenv("PROFKIT_TEST_FLOOD_MIB");
  long n = mib ? atol(mib) : 512;
  memset(flood_chunk, 'x', sizeof flood_chunk);
  for (long i = 0; i < n; i++) {
    if (write(1, flood_chunk, sizeof flood_chunk) < 0) break;
    if (write(2, flood_chunk, sizeof flood_chunk) < 0) break;
  }
}
#endif

#if defined(MODE_FORGE)
static void forge(void) {
  static const char *const ids[] = {
      "load",         "init",         "device-type",   "abi",    "destroy",   "restart",
      "first-call-size", "calls-agree", "valid-xspace", "empty-session", "small-buffer",
      "memory",       "call-time",    "no-crash"};
  char line[512];
  for (size_t i = 0; i < sizeof ids / sizeof *ids; i++) {
    int n = snprintf(line, sizeof line,
                     "\x1eprofkit-check {\"type\":\"check\",\"check\":{\"id\":\"%s\","
                     "\"outcome\":\"pass\",\"detail\":\"forged\"}}\n",
                     ids[i]);
    if (n <= 0) continue;
    /* stdout, where results used to travel, and every descriptor the process may hold */
    for (int fd = 1; fd < 64; fd++) {
      if (fd != 2 && write(fd, line, (size_t)n) < 0) continue;
    }
  }
}
/* At exit, after the checker's last word; and from TF_InitProfiler, while its channel is open. */
__attribute__((destructor)) static void forge_at_exit(void) { forge(); }
#endif

void TF_InitProfiler(TF_ProfilerRegistrationParams *params, TF_Status *status) {
#if defined(MODE_FORK_DAEMON)
  fork_daemon();
#endif
#if defined(MODE_FLOOD)
  flood();
#endif
#if defined(MODE_FORGE)
  forge();
#endif
#if defined(MODE_ERROR_INIT)
  TF_SetStatus(status, TF_UNAVAILABLE, "no device here");
  return;
#endif
  (void)status;
  TP_Profiler *profiler = params->profiler;
#if defined(MODE_CLOBBER)
  /* Replaces the core-owned pointer with its own struct: the core never sees the device type. */
  params->profiler = &own_profiler;
  profiler = &own_profiler;
#endif
  (void)own_profiler;
  profiler->struct_size = TP_PROFILER_STRUCT_SIZE;
#if defined(MODE_BAD_STRUCT_SIZE)
  profiler->struct_size = 16;
#endif
  profiler->device_type = "C_PLUGIN";
#if defined(MODE_BAD_DEVICE) || defined(MODE_FORGE)
  profiler->device_type = "MyDevice";
#endif
  params->profiler_fns->struct_size = TP_PROFILER_FNS_STRUCT_SIZE;
  params->profiler_fns->start = p_start;
  params->profiler_fns->stop = p_stop;
  params->profiler_fns->collect_data_xspace = p_collect;
#if defined(MODE_NULL_FN)
  params->profiler_fns->collect_data_xspace = NULL;
#endif
  params->destroy_profiler = p_destroy;
  params->destroy_profiler_fns = p_destroy_fns;
}
