// Header-only shims for Linux calls Swift's Glibc module does not export: they are declared only under _GNU_SOURCE
// (ppoll, pipe2, pthread_setname_np), which an importing Swift module cannot define. No logic: each wrapper is the call itself.
#ifndef CLINUXIO_H
#define CLINUXIO_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

static inline int clinuxio_ppoll(struct pollfd *fds, nfds_t count, const struct timespec *timeout) {
    return ppoll(fds, count, timeout, NULL);
}

static inline int clinuxio_pipe2(int ends[2], int flags) {
    return pipe2(ends, flags);
}

// Names the calling thread as the system lists it (at most 15 bytes; longer names are refused with ERANGE).
static inline int clinuxio_name_this_thread(const char *name) {
    return pthread_setname_np(pthread_self(), name);
}

#endif
