/*
 * SSE load generator for bench/streams.ts: holds N streams open on raw sockets (epoll), counts the
 * events that arrive and, on the first `timed` sockets, the latency of each swap from its creation
 * (its tx_hash carries the creation time in microseconds, hex) to its arrival here. Written in C so
 * the reading side costs little beside the server it measures (a Node reader spends as much CPU per
 * read as the server spends per write, and its own lag would be counted as latency).
 *
 *   sse-load <port> <authorization> <connections> <timed> <path>
 *
 * Talks to the bench over lines: prints {"open":N} once every stream is open; then reads commands
 * on stdin: "start" (reset the counts, time from now on; answers {"started":1}), "stop" (answers
 * {"events","closed","samples","p50","p99","loopP99","latencies":[..]}, times in ms; loopP99: the
 * 99th percentile of the time spent on one batch of ready sockets), "exit".
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static const char MARKER[] = "\nevent: ";
#define MARKER_LEN 8
static const char HASH[] = "\"tx_hash\":\"0x";
#define HASH_LEN 13
#define WAVE 250

struct conn {
  int fd;
  int ok;        /* the 200 status line was seen */
  int carried;   /* bytes of MARKER that ended the last read */
  int closed;
};

static struct conn *conns;
static int nconns, ntimed;
static long long events, closed_count;
static int timing;
static double *lat;
static size_t nlat, caplat;
static double *loops;
static size_t nloops, caploops;
static char buf[256 * 1024];

/* The clock the server stamps swaps with (Node's process.hrtime). */
static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static double mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void push(double **a, size_t *n, size_t *cap, double v) {
  if (*n == *cap) {
    *cap = *cap ? *cap * 2 : 65536;
    *a = realloc(*a, *cap * sizeof(double));
    if (!*a) abort();
  }
  (*a)[(*n)++] = v;
}

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* Counts the markers of one read (and the one split across the last read and this one). */
static void consume(struct conn *c, int index, const char *p, size_t n) {
  if (c->carried > 0) {
    size_t rest = MARKER_LEN - c->carried;
    if (n >= rest && memcmp(p, MARKER + c->carried, rest) == 0) events++;
  }
  const char *end = p + n;
  for (const char *at = p; (at = memmem(at, end - at, MARKER, MARKER_LEN)) != NULL; at += MARKER_LEN) events++;
  c->carried = 0;
  for (int k = n < MARKER_LEN - 1 ? (int)n : MARKER_LEN - 1; k > 0; k--) {
    if (memcmp(end - k, MARKER, k) == 0) {
      c->carried = k;
      break;
    }
  }
  if (timing && index < ntimed) {
    double received = now_us();
    for (const char *at = p; (at = memmem(at, end - at, HASH, HASH_LEN)) != NULL; at += HASH_LEN) {
      const char *h = at + HASH_LEN;
      if (end - h < 64) break;
      uint64_t v = 0;
      int good = 1;
      for (int i = 0; i < 64 && good; i++) {
        int d = hexval(h[i]);
        if (d < 0) good = 0;
        else v = (v << 4) | (uint64_t)d; /* the creation time fits the last 16 digits */
      }
      if (good) push(&lat, &nlat, &caplat, (received - (double)v) / 1000.0);
    }
  }
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void answer_stop(void) {
  timing = 0;
  qsort(loops, nloops, sizeof(double), cmp);
  qsort(lat, nlat, sizeof(double), cmp);
  double loop99 = nloops ? loops[(size_t)(0.99 * nloops)] : 0;
  double p50 = nlat ? lat[(size_t)(0.5 * nlat)] : -1, p99 = nlat ? lat[(size_t)(0.99 * nlat)] : -1;
  printf("{\"events\":%lld,\"closed\":%lld,\"samples\":%zu,\"p50\":%.3f,\"p99\":%.3f,\"loopP99\":%.3f,\"latencies\":[", events, closed_count, nlat, p50, p99, loop99);
  for (size_t i = 0; i < nlat; i++) printf(i ? ",%.3f" : "%.3f", lat[i]);
  printf("]}\n");
  fflush(stdout);
}

static int open_one(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0 && errno != EINPROGRESS) {
    close(fd);
    return -1;
  }
  return fd;
}

int main(int argc, char **argv) {
  if (argc < 6) {
    fprintf(stderr, "usage: sse-load <port> <authorization> <connections> <timed> <path>\n");
    return 2;
  }
  int port = atoi(argv[1]);
  nconns = atoi(argv[3]);
  ntimed = atoi(argv[4]);
  char request[2048];
  int reqlen = snprintf(request, sizeof request, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: %s\r\n\r\n", argv[5], argv[2]);
  conns = calloc(nconns, sizeof *conns);
  int ep = epoll_create1(0);
  struct epoll_event ev = {.events = EPOLLIN, .data.u64 = UINT64_MAX};
  epoll_ctl(ep, EPOLL_CTL_ADD, 0, &ev);
  struct epoll_event evs[1024];
  int opened = 0;
  /* Open in waves: each wave's requests are sent once connected, and the next wave waits for their 200s. */
  for (int i = 0; i < nconns; i += WAVE) {
    int last = i + WAVE < nconns ? i + WAVE : nconns;
    for (int k = i; k < last; k++) {
      conns[k].fd = open_one(port);
      if (conns[k].fd < 0) {
        fprintf(stderr, "sse-load: connect failed: %s\n", strerror(errno));
        return 1;
      }
      struct epoll_event e = {.events = EPOLLOUT | EPOLLIN | EPOLLRDHUP, .data.u64 = (uint64_t)k};
      epoll_ctl(ep, EPOLL_CTL_ADD, conns[k].fd, &e);
    }
    while (opened < last) {
      int n = epoll_wait(ep, evs, 1024, 10000);
      if (n <= 0) {
        fprintf(stderr, "sse-load: streams did not open (%d of %d)\n", opened, nconns);
        return 1;
      }
      for (int j = 0; j < n; j++) {
        uint64_t k = evs[j].data.u64;
        if (k == UINT64_MAX) continue;
        struct conn *c = &conns[k];
        if (evs[j].events & EPOLLOUT) {
          if (write(c->fd, request, reqlen) != reqlen) {
            fprintf(stderr, "sse-load: request not sent\n");
            return 1;
          }
          struct epoll_event e = {.events = EPOLLIN | EPOLLRDHUP, .data.u64 = k};
          epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &e);
        }
        if (evs[j].events & EPOLLIN) {
          ssize_t r = read(c->fd, buf, sizeof buf);
          if (r <= 0) {
            fprintf(stderr, "sse-load: stream closed before it opened\n");
            return 1;
          }
          if (!c->ok) {
            if (memmem(buf, r, "200 OK", 6) == NULL) {
              fprintf(stderr, "sse-load: stream refused: %.*s\n", (int)(r < 200 ? r : 200), buf);
              return 1;
            }
            c->ok = 1;
            opened++;
          }
          consume(c, (int)k, buf, r);
        }
      }
    }
  }
  printf("{\"open\":%d}\n", opened);
  fflush(stdout);

  char line[256];
  size_t linelen = 0;
  for (;;) {
    int n = epoll_wait(ep, evs, 1024, 1000);
    double began = mono_ms();
    for (int j = 0; j < n; j++) {
      uint64_t k = evs[j].data.u64;
      if (k == UINT64_MAX) {
        ssize_t r = read(0, line + linelen, sizeof line - 1 - linelen);
        if (r <= 0) return 0;
        linelen += r;
        char *nl;
        while ((nl = memchr(line, '\n', linelen)) != NULL) {
          *nl = 0;
          if (strcmp(line, "start") == 0) {
            events = 0;
            nlat = 0;
            nloops = 0;
            timing = 1;
            printf("{\"started\":1}\n");
            fflush(stdout);
          } else if (strcmp(line, "stop") == 0) {
            answer_stop();
          } else if (strcmp(line, "exit") == 0) {
            for (int i = 0; i < nconns; i++) close(conns[i].fd);
            return 0;
          }
          size_t used = nl - line + 1;
          memmove(line, nl + 1, linelen - used);
          linelen -= used;
        }
        continue;
      }
      struct conn *c = &conns[k];
      if (c->closed) continue;
      ssize_t r = read(c->fd, buf, sizeof buf);
      if (r > 0) consume(c, (int)k, buf, r);
      else if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
        c->closed = 1;
        closed_count++;
        epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
      }
    }
    if (timing && n > 0) push(&loops, &nloops, &caploops, mono_ms() - began);
  }
}
