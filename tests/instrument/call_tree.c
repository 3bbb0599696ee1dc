/*
 * call_tree.c — built with -finstrument-functions; the calls are known exactly:
 *   main 1 → top 1 → skipme 10 → mid 10 → leaf 30;  main → rec 1 → rec … (6 in all);
 *   a second thread: thread_main 1 → leaf 5;  main → block 1 (a JAGER_SPAN) → leaf 1.
 * The JAGER_SPAN's inline helpers are no_instrument_function: no spans of their own.
 */
#include <pthread.h>
#include <stdio.h>

#include "jager.h"

#define NOINLINE __attribute__((noinline))
volatile int sink;

NOINLINE static int leaf(int x) { return x * 2 + 1; }
NOINLINE static int mid(int x)
{
    int s = 0;
    for (int i = 0; i < 3; i++) s += leaf(x + i);
    return s;
}
NOINLINE int skipme(int x) { return mid(x) + 1; }
NOINLINE int top(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++) s += skipme(i);
    return s;
}
NOINLINE int rec(int k) { return k ? rec(k - 1) + 1 : 0; }
NOINLINE static void *thread_main(void *arg)
{
    for (int i = 0; i < 5; i++) sink += leaf(i);
    return arg;
}

int main(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, thread_main, NULL) != 0) return 1;
    pthread_join(t, NULL);
    sink += top(10) + rec(5);
    {
        JAGER_SPAN("block");
        sink += leaf(100);
    }
    printf("%d\n", sink);
    return 0;
}
