// faultfs: an LD_PRELOAD shim that makes writes and fsyncs of a program's
// log segments fail, as a full or failing disk does, without root.
//
//   CDC_FAULT_DIR=DIR LD_PRELOAD=libcdc_faultfs.so cdc-capture ...
//
// Checked on every call, so a test can switch faults on and off while the
// program runs:
//   DIR/write   exists: write(2) and pwrite(2) to a segment fail with the
//               errno named in it (ENOSPC or EIO), nothing written
//   DIR/fsync   exists: fsync(2) and fdatasync(2) of a segment fail with
//               the errno named in it ("EIO once": the first call only,
//               as Linux reports a failed writeback); before failing, the
//               file is cut
//               back to its size at its last successful sync, as a kernel
//               that dropped the dirty pages of a failed writeback leaves it
//   DIR/stall   exists: fsync(2) and fdatasync(2) of a segment wait until
//               it is removed, then sync (a disk that stops answering)
// A segment is a file whose path holds "/segments/" and ends in ".seg".
// Each fault injected is counted in DIR/injected (one line each).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

// Per file (descriptors made by dup() share it): the size at its last
// successful sync; bytes there before the first write seen are taken as
// synced.
#define MAX_FILES 1024
static struct {
  dev_t dev;
  ino_t ino;
  off_t synced;
} files[MAX_FILES];
static int nfiles;

static off_t* Synced(int fd, int create) {
  struct stat st;
  if (fstat(fd, &st) != 0) return NULL;
  for (int i = 0; i < nfiles; ++i)
    if (files[i].dev == st.st_dev && files[i].ino == st.st_ino)
      return &files[i].synced;
  if (!create || nfiles == MAX_FILES) return NULL;
  files[nfiles].dev = st.st_dev;
  files[nfiles].ino = st.st_ino;
  files[nfiles].synced = st.st_size;
  return &files[nfiles++].synced;
}

static int IsSegment(int fd) {
  char link[64], path[PATH_MAX];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, path, sizeof path - 1);
  if (n <= 0) return 0;
  path[n] = '\0';
  size_t len = (size_t)n;
  return strstr(path, "/segments/") != NULL && len > 4 &&
         strcmp(path + len - 4, ".seg") == 0;
}

// The errno the fault file `name` asks for, or 0 when there is none.
static int Fault(const char* name) {
  const char* dir = getenv("CDC_FAULT_DIR");
  if (dir == NULL) return 0;
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  int saved = errno;
  FILE* f = fopen(path, "re");
  if (f == NULL) {
    errno = saved;
    return 0;
  }
  char what[32] = "";
  if (fgets(what, sizeof what, f) == NULL) what[0] = '\0';
  fclose(f);
  snprintf(path, sizeof path, "%s/injected", dir);
  FILE* log = fopen(path, "ae");
  if (log != NULL) {
    fprintf(log, "%s %s", name, what);
    fclose(log);
  }
  // "once": the error is reported to one call only, as Linux reports a
  // failed writeback once; the next sync then succeeds.
  if (strstr(what, "once") != NULL) {
    snprintf(path, sizeof path, "%s/%s", dir, name);
    unlink(path);
  }
  errno = saved;
  return strncmp(what, "EIO", 3) == 0 ? EIO : ENOSPC;
}

static void NoteSynced(int fd) {
  struct stat st;
  off_t* synced = Synced(fd, 1);
  if (synced != NULL && fstat(fd, &st) == 0) *synced = st.st_size;
}

ssize_t write(int fd, const void* buf, size_t n) {
  static ssize_t (*real)(int, const void*, size_t);
  if (real == NULL) real = dlsym(RTLD_NEXT, "write");
  if (fd > 2 && IsSegment(fd)) {
    (void)Synced(fd, 1);
    int e = Fault("write");
    if (e != 0) {
      errno = e;
      return -1;
    }
  }
  return real(fd, buf, n);
}

ssize_t pwrite(int fd, const void* buf, size_t n, off_t off) {
  static ssize_t (*real)(int, const void*, size_t, off_t);
  if (real == NULL) real = dlsym(RTLD_NEXT, "pwrite");
  if (IsSegment(fd)) {
    (void)Synced(fd, 1);
    int e = Fault("write");
    if (e != 0) {
      errno = e;
      return -1;
    }
  }
  return real(fd, buf, n, off);
}
ssize_t pwrite64(int fd, const void* buf, size_t n, off_t off)
    __attribute__((alias("pwrite")));

// Waits while DIR/stall exists.
static void Stall(void) {
  const char* dir = getenv("CDC_FAULT_DIR");
  if (dir == NULL) return;
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/stall", dir);
  int saved = errno;
  while (access(path, F_OK) == 0) usleep(10000);
  errno = saved;
}

static int Sync(int fd, int (*real)(int)) {
  if (IsSegment(fd)) {
    Stall();
    int e = Fault("fsync");
    if (e != 0) {
      // The writeback failed: what was not synced before is gone.
      off_t* synced = Synced(fd, 0);
      if (synced != NULL) ftruncate(fd, *synced);
      errno = e;
      return -1;
    }
  }
  int r = real(fd);
  if (r == 0) NoteSynced(fd);
  return r;
}

int fsync(int fd) {
  static int (*real)(int);
  if (real == NULL) real = dlsym(RTLD_NEXT, "fsync");
  return Sync(fd, real);
}

int fdatasync(int fd) {
  static int (*real)(int);
  if (real == NULL) real = dlsym(RTLD_NEXT, "fdatasync");
  return Sync(fd, real);
}
