// Writer (CPU 0) writes N lines of a slot then a flag line; reader (CPU 1) waits for the flag,
// copies the N lines, answers on its own flag line. Round trip per N, ns (median of batches).
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <x86intrin.h>
#define MAXL 24
static _Alignas(64) unsigned char slot[4][MAXL*64];
static _Alignas(64) _Atomic unsigned long flag;
static _Alignas(64) _Atomic unsigned long ack;
static _Alignas(64) unsigned char src[MAXL*64];
static _Alignas(64) unsigned char dst[MAXL*64];
static int N, MODE, ITERS=20000;
static void pin(int c){cpu_set_t s;CPU_ZERO(&s);CPU_SET(c,&s);pthread_setaffinity_np(pthread_self(),sizeof s,&s);}
static void *reader(void*a){pin(1); for(unsigned long i=1;i<=(unsigned long)ITERS;i++){ while(atomic_load_explicit(&flag,memory_order_acquire)!=i); unsigned char*s=slot[i&3];
  if(MODE==1){ volatile unsigned long t=0; for(int l=0;l<N;l++) t^=((unsigned long*)(s+64*l))[0]; }
  if(MODE==3){ for(int l=0;l<N;l++) _mm_prefetch((const char*)(s+64*l),_MM_HINT_T0); }
  memcpy(dst,s,N*64); atomic_store_explicit(&ack,i,memory_order_release);} return 0;}
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e9+t.tv_nsec;}
int main(int c,char**v){ MODE=atoi(v[1]); pin(0); memset(src,1,sizeof src);
 for(N=1;N<=17;N++){ atomic_store(&flag,0); atomic_store(&ack,0); pthread_t t; pthread_create(&t,0,reader,0);
  double t0=0; for(unsigned long i=1;i<=(unsigned long)ITERS;i++){ if(i==ITERS/2) t0=now(); unsigned char*s=slot[i&3];
   if(MODE==2){ for(int l=0;l<N;l++) __builtin_prefetch(s+64*l,1,3); }
   if(MODE==4) memset(src,(int)i,N*64);
   memcpy(s,src,N*64); atomic_store_explicit(&flag,i,memory_order_release); while(atomic_load_explicit(&ack,memory_order_acquire)!=i); }
  double dt=(now()-t0)/(ITERS/2); pthread_join(t,0); printf("%d:%.0f ",N,dt); fflush(stdout);} printf("\n"); }
