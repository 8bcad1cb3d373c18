/* Dynamic processes: MPI_Comm_spawn and MPI_Comm_spawn_multiple, and the
 * parent a spawned job's MPI_Init connects to (see mpi_dynproc.c for how
 * the two jobs meet). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "weft/weft_link.h"
#include "mpi/mpi_dynproc_int.h"

/* An info value, or NULL (into buf). */
static const char *info_get(MPI_Info info, const char *key, char *buf, int len)
{
    int flag = 0;
    if (!info || info == MPI_INFO_NULL || PMPI_Info_get(info, key, len - 1, buf, &flag) || !flag)
        return NULL;
    return buf;
}

/* The weftrun that starts spawned jobs. */
static const char *weftrun_path(void)
{
    const char *e = getenv("WEFT_WEFTRUN");
    if (e && access(e, X_OK) == 0)
        return e;
#ifdef WEFT_MPI_WEFTRUN_INSTALLED
    if (access(WEFT_MPI_WEFTRUN_INSTALLED, X_OK) == 0)
        return WEFT_MPI_WEFTRUN_INSTALLED;
#endif
#ifdef WEFT_MPI_WEFTRUN_BUILT
    if (access(WEFT_MPI_WEFTRUN_BUILT, X_OK) == 0)
        return WEFT_MPI_WEFTRUN_BUILT;
#endif
    return "weftrun";
}

/* A command found in info's "path" (colon-separated directories), else as
 * given (execvp searches PATH). */
static char *resolve(const char *cmd, MPI_Info info)
{
    char dirs[MPI_MAX_INFO_VAL];
    if (strchr(cmd, '/') || !info_get(info, "path", dirs, sizeof dirs))
        return strdup(cmd);
    for (char *save = NULL, *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        char full[PATH_MAX];
        snprintf(full, sizeof full, "%s/%s", d, cmd);
        if (access(full, X_OK) == 0)
            return strdup(full);
    }
    return strdup(cmd);
}

/* The weftrun command line for count apps: weftrun --lifeline-fd FD
 * [--hosts H | --hostfile F] [--bind-to B] -x WEFT_PARENT_PORT -n N cmd args
 * [: -n N cmd args]... (host and the like from the first app's info). */
static char **spawn_argv(int count, char *cmds[], char **argvs[], const int np[],
                         const MPI_Info infos[], int lifeline, char **wdir)
{
    size_t cap = 16;
    for (int a = 0; a < count; a++) {
        cap += 4;
        for (int i = 0; argvs && argvs[a] && argvs[a][i]; i++)
            cap++;
    }
    char **v = calloc(cap, sizeof *v);
    if (!v)
        return NULL;
    int n = 0;
    char buf[MPI_MAX_INFO_VAL], num[32];
    v[n++] = strdup(weftrun_path());
    snprintf(num, sizeof num, "%d", lifeline);
    v[n++] = strdup("--lifeline-fd");
    v[n++] = strdup(num);
    MPI_Info info0 = infos ? infos[0] : MPI_INFO_NULL;
    if (info_get(info0, "host", buf, sizeof buf)) {
        v[n++] = strdup("--hosts");
        v[n++] = strdup(buf);
    } else if (info_get(info0, "hostfile", buf, sizeof buf)) {
        v[n++] = strdup("--hostfile");
        v[n++] = strdup(buf);
    }
    v[n++] = strdup("--bind-to");
    v[n++] = strdup(info_get(info0, "bind_to", buf, sizeof buf) ? buf : "none");
    v[n++] = strdup("-x");
    v[n++] = strdup("WEFT_PARENT_PORT");
    *wdir = info_get(info0, "wdir", buf, sizeof buf) ? strdup(buf) : NULL;
    for (int a = 0; a < count; a++) {
        if (a > 0)
            v[n++] = strdup(":");
        snprintf(num, sizeof num, "%d", np[a]);
        v[n++] = strdup("-n");
        v[n++] = strdup(num);
        v[n++] = resolve(cmds[a], infos ? infos[a] : MPI_INFO_NULL);
        for (int i = 0; argvs && argvs[a] && argvs[a][i]; i++)
            v[n++] = strdup(argvs[a][i]);
    }
    bool whole = true;
    for (int i = 0; i < n; i++)
        whole = whole && v[i];
    if (!whole) { /* out of memory somewhere: none of it */
        for (int i = 0; i < n; i++)
            free(v[i]);
        free(v);
        v = NULL;
    }
    return v;
}

extern char **environ;

/* The environment of the job's weftrun: ours without this job's own WEFT_*
 * facts, with the port. NULL when out of memory. */
static char **spawn_env(const char *port)
{
    static const char *const drop[] = {
        "WEFT_RANK=",       "WEFT_SIZE=",    "WEFT_JOBID=",  "WEFT_BOOT_ADDR=",
        "WEFT_JOB_SECRET=", "WEFT_NODE_ID=", "WEFT_APPNUM=", "WEFT_PARENT_PORT="};
    size_t n = 0;
    while (environ[n])
        n++;
    char **env = calloc(n + 2, sizeof *env);
    if (!env)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        bool keep = true;
        for (size_t d = 0; d < sizeof drop / sizeof *drop && keep; d++)
            keep = strncmp(environ[i], drop[d], strlen(drop[d])) != 0;
        if (keep)
            env[k++] = environ[i];
    }
    size_t len = strlen("WEFT_PARENT_PORT=") + strlen(port) + 1;
    if (!(env[k] = malloc(len))) {
        free(env);
        return NULL;
    }
    snprintf(env[k], len, "WEFT_PARENT_PORT=%s", port);
    return env;
}

/* Start the job's weftrun. Its pid, or -1. */
static pid_t spawn_job(char **argv, const char *wdir, const char *port, int lifeline_r)
{
    char **env = spawn_env(port);
    if (!env)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        /* In a process that may have threads, only async-signal-safe calls
         * until exec. */
        if (wdir && chdir(wdir) != 0)
            _exit(127);
        int fl = fcntl(lifeline_r, F_GETFD);
        fcntl(lifeline_r, F_SETFD, fl & ~FD_CLOEXEC);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        execvpe(argv[0], argv, env);
        _exit(127);
    }
    size_t k = 0;
    while (env[k])
        k++;
    free(env[k - 1]);
    free(env);
    return pid;
}

/* Start the job with weftrun and accept its connection on p: the socket, or
 * -1 (said) when the job could not start or ended before it connected. */
static int start_weftrun(port_t *p, int count, char *cmds[], char **argvs[], const int np[],
                         const MPI_Info infos[], uint8_t *lsecret, const char *fn)
{
    int pipefd[2] = {-1, -1}, fd = -1;
    char *wdir = NULL, **argv = NULL;
    pid_t pid = -1;
    if (pipe2(pipefd, O_CLOEXEC) == 0 &&
        (argv = spawn_argv(count, cmds, argvs, np, infos, pipefd[0], &wdir)))
        pid = spawn_job(argv, wdir, p->name, pipefd[0]);
    if (pipefd[0] >= 0)
        close(pipefd[0]);
    int status = 0;
    if (pid > 0 && (fd = weft__dyn_port_accept(p, pid, lsecret, &status)) < 0) {
        char why[128];
        if (WIFEXITED(status))
            snprintf(why, sizeof why, "it exited with status %d", WEXITSTATUS(status));
        else
            snprintf(why, sizeof why, "it was killed by signal %d", WTERMSIG(status));
        weft__dyn_say("%s: the spawned job ended before its ranks connected (%s)", fn, why);
    }
    spawned_t *s = fd >= 0 ? malloc(sizeof *s) : NULL;
    if (s) {
        /* Its pipe stays open until the job ended (weft__mpi_dyn_fini). */
        s->pid = pid;
        s->lifeline = pipefd[1];
        pthread_mutex_lock(&weft__dyn_lock);
        s->next = weft__dyn_spawned;
        weft__dyn_spawned = s;
        pthread_mutex_unlock(&weft__dyn_lock);
    } else if (pipefd[1] >= 0) {
        close(pipefd[1]);
    }
    for (int i = 0; argv && argv[i]; i++)
        free(argv[i]);
    free(argv);
    free(wdir);
    return fd;
}

/* Start the job through the launcher that started ours (PMIx_Spawn under
 * Open MPI's mpirun, srun, PRRTE) and accept its connection on p: the
 * socket; -1 when it failed (said); -2 when this launcher cannot spawn. */
static int start_launcher(port_t *p, int count, char *cmds[], char **argvs[], const int np[],
                          const MPI_Info infos[], uint8_t *lsecret, const char *fn)
{
    char hosts[MPI_MAX_INFO_VAL], hostfile[MPI_MAX_INFO_VAL], wdir[MPI_MAX_INFO_VAL];
    MPI_Info info0 = infos ? infos[0] : MPI_INFO_NULL;
    char port_env[MPI_MAX_PORT_NAME + 32];
    snprintf(port_env, sizeof port_env, "WEFT_PARENT_PORT=%s", p->name);
    weft_launch_app_t *apps = calloc((size_t)count, sizeof *apps);
    char ***argv = calloc((size_t)count, sizeof *argv);
    /* Each app's environment: the port, and its MPI_APPNUM. */
    char(*appnum)[32] = calloc((size_t)count, sizeof *appnum);
    char *(*env)[3] = calloc((size_t)count, sizeof *env);
    int rc = apps && argv && appnum && env ? WEFT_OK : WEFT_ENOMEM;
    for (int a = 0; a < count && rc == WEFT_OK; a++) {
        int n = 0;
        while (argvs && argvs[a] && argvs[a][n])
            n++;
        if (!(argv[a] = calloc((size_t)n + 2, sizeof **argv)) ||
            !(argv[a][0] = resolve(cmds[a], infos ? infos[a] : MPI_INFO_NULL))) {
            rc = WEFT_ENOMEM;
            break;
        }
        for (int i = 0; i < n; i++)
            argv[a][i + 1] = argvs[a][i];
        snprintf(appnum[a], sizeof appnum[a], "WEFT_APPNUM=%d", a);
        env[a][0] = port_env;
        env[a][1] = appnum[a];
        apps[a] = (weft_launch_app_t){.argv = argv[a], .np = np[a], .env = env[a]};
    }
    if (rc == WEFT_OK)
        rc = weft_launch(weft__mpi.ctx, apps, count, info_get(info0, "host", hosts, sizeof hosts),
                         info_get(info0, "hostfile", hostfile, sizeof hostfile),
                         info_get(info0, "wdir", wdir, sizeof wdir));
    for (int a = 0; argv && a < count; a++) {
        if (argv[a])
            free(argv[a][0]);
        free(argv[a]);
    }
    free(argv);
    free(apps);
    free(appnum);
    free(env);
    if (rc == WEFT_EUNSUPPORTED)
        return -2;
    if (rc != WEFT_OK) {
        weft__dyn_say("%s: the launcher could not start the job: %s", fn, weft_strerror(rc));
        return -1;
    }
    /* The launcher watches the job: one that fails ends ours with it. */
    return weft__dyn_port_accept(p, 0, lsecret, NULL);
}

static int spawn_common(int count, char *cmds[], char **argvs[], const int np[],
                        const MPI_Info infos[], int root, MPI_Comm comm, MPI_Comm *intercomm,
                        int errcodes[], const char *fn)
{
    int rc = weft__dyn_check_root(comm, root, intercomm);
    if (rc)
        return weft__mpi_err(comm, rc, fn);
    *intercomm = MPI_COMM_NULL;
    int fd = -1, root_err = MPI_SUCCESS, total = 0;
    uint8_t lsecret[SECRET_LEN] = {0};
    if (comm->rank == root) {
        if (count < 1)
            root_err = MPI_ERR_ARG;
        for (int a = 0; a < count && !root_err; a++) {
            if (!cmds || !cmds[a] || !np || np[a] < 1 || np[a] > 65536)
                root_err = MPI_ERR_ARG;
            else
                total += np[a];
        }
        port_t *p = root_err ? NULL : weft__dyn_port_new();
        if (!root_err && !p)
            root_err = MPI_ERR_SPAWN;
        /* weftrun starts the job, unless WEFT_SPAWN=launcher asks the
         * launcher that started ours (when it is not weftrun) to. */
        const char *how = getenv("WEFT_SPAWN");
        fd = -2;
        if (!root_err && how && !strcmp(how, "launcher") && !getenv("WEFT_WEFTRUN"))
            fd = start_launcher(p, count, cmds, argvs, np, infos, lsecret, fn);
        if (!root_err && fd == -2)
            fd = start_weftrun(p, count, cmds, argvs, np, infos, lsecret, fn);
        if (!root_err && fd < 0)
            root_err = MPI_ERR_SPAWN;
        if (p)
            weft__dyn_port_free(p);
    }
    rc = weft__dyn_meet(comm, root, fd, root_err, true, lsecret, intercomm);
    if (fd >= 0)
        close(fd);
    /* One code per process asked for: the root knows how many; the others
     * (maxprocs is the root's argument) learn it from the new communicator,
     * or, when the spawn failed, are told nothing more than the error. */
    if (errcodes != MPI_ERRCODES_IGNORE) {
        int n = comm->rank == root ? total : rc ? 0 : (*intercomm)->remote_group->size;
        for (int i = 0; i < n; i++)
            errcodes[i] = rc ? MPI_ERR_SPAWN : MPI_SUCCESS;
    }
    return rc ? weft__mpi_err(comm, rc, fn) : MPI_SUCCESS;
}

int PMPI_Comm_spawn(const char *command, char *argv[], int maxprocs, MPI_Info info, int root,
                    MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[])
{
    char *cmds[1] = {(char *)command};
    char **argvs[1] = {argv == MPI_ARGV_NULL ? NULL : argv};
    MPI_Info infos[1] = {info};
    return spawn_common(1, cmds, argvs, &maxprocs, infos, root, comm, intercomm, array_of_errcodes,
                        "MPI_Comm_spawn");
}
WEFT_MPI_ALIAS(Comm_spawn)

int PMPI_Comm_spawn_multiple(int count, char *array_of_commands[], char **array_of_argv[],
                             const int array_of_maxprocs[], const MPI_Info array_of_info[],
                             int root, MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[])
{
    return spawn_common(count, array_of_commands,
                        array_of_argv == MPI_ARGVS_NULL ? NULL : array_of_argv, array_of_maxprocs,
                        array_of_info, root, comm, intercomm, array_of_errcodes,
                        "MPI_Comm_spawn_multiple");
}
WEFT_MPI_ALIAS(Comm_spawn_multiple)

/* ---------------------------------------------------------------- init, finalize */

int weft__mpi_dyn_init(void)
{
    const char *port = getenv("WEFT_PARENT_PORT");
    if (!port)
        return MPI_SUCCESS;
    char name[MPI_MAX_PORT_NAME];
    snprintf(name, sizeof name, "%s", port);
    unsetenv("WEFT_PARENT_PORT"); /* not for the jobs this one may start */
    MPI_Comm c = MPI_COMM_NULL;
    int rc = weft__dyn_connect_to(name, 0, MPI_COMM_WORLD, &c, "MPI_Init");
    if (rc) {
        weft__mpi_say("MPI_Init: cannot connect to the parents that spawned this job");
        return rc;
    }
    snprintf(c->name, sizeof c->name, "MPI_COMM_PARENT");
    weft__mpi_comm_retain(c); /* ours, beside the handle's */
    pthread_mutex_lock(&weft__dyn_lock);
    weft__dyn_parent = c;
    pthread_mutex_unlock(&weft__dyn_lock);
    return MPI_SUCCESS;
}

void weft__mpi_dyn_fini(void)
{
    pthread_mutex_lock(&weft__dyn_lock);
    MPI_Comm p = weft__dyn_parent;
    weft__dyn_parent = NULL;
    spawned_t *s = weft__dyn_spawned;
    weft__dyn_spawned = NULL;
    port_t *ports_left = weft__dyn_ports;
    weft__dyn_ports = NULL;
    pthread_mutex_unlock(&weft__dyn_lock);
    if (p)
        weft__mpi_comm_release(p);
    while (ports_left) {
        port_t *next = ports_left->next;
        weft__dyn_port_free(ports_left);
        ports_left = next;
    }
    /* The jobs this process spawned end on their own (finalize is collective
     * over connected processes); their pipes close after, so that none of
     * them is ended for our leaving. */
    while (s) {
        spawned_t *next = s->next;
        int status;
        while (waitpid(s->pid, &status, 0) < 0 && errno == EINTR)
            ;
        close(s->lifeline);
        free(s);
        s = next;
    }
}
