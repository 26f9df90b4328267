// One-way, barrier then one: writer (CPU 0) writes fresh src, both pass a spin barrier,
// writer reads TSC, copies N lines (1 head + N-1 further: head holds flag) into slot i&3 and
// raises the flag; reader (CPU 1) spins, copies, reads TSC. Median one-way per N (cycles→ns).
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <x86intrin.h>
#define MAXL 24
#define IT 20000
static _Alignas(64) unsigned char more[4][16*64];
static _Alignas(64) _Atomic unsigned long flag[4*8];
static _Alignas(64) _Atomic unsigned long bar[2*8];
static _Alignas(64) unsigned char src[MAXL*64];
static _Alignas(64) unsigned char dst[MAXL*64];
static unsigned long t0s[IT], t1s[IT];
static int N, MODE;
static void pin(int c){cpu_set_t s;CPU_ZERO(&s);CPU_SET(c,&s);pthread_setaffinity_np(pthread_self(),sizeof s,&s);}
static void barrier(int me, unsigned long k){ atomic_store_explicit(&bar[me*8],k,memory_order_release); while(atomic_load_explicit(&bar[(1-me)*8],memory_order_acquire)<k); }
static void *reader(void*a){pin(1); for(unsigned long i=1;i<IT;i++){ barrier(1,2*i); barrier(1,2*i+1);
  while(atomic_load_explicit(&flag[(i&3)*8],memory_order_acquire)!=i);
  if(N>1){ size_t len=(N-1)*64; unsigned char*sp=more[i&3];
    if(MODE&2){ for(size_t o=0;o<len;o+=256){ size_t k=len-o<256?len-o:256; memcpy(dst+o,sp+o,k);} }
    else if(MODE&4){ for(size_t o=0;o<len;o+=64) __builtin_prefetch(sp+o,0,3); memcpy(dst,sp,len); }
    else memcpy(dst,sp,len); }
  t1s[i]=__rdtsc(); } return 0;}
int cmp(const void*a,const void*b){long x=*(long*)a,y=*(long*)b;return x<y?-1:x>y;}
int main(int c,char**v){ MODE=atoi(v[1]); pin(0);
 for(N=1;N<=17;N++){ memset((void*)flag,0,sizeof flag); memset((void*)bar,0,sizeof bar); pthread_t t; pthread_create(&t,0,reader,0);
  for(unsigned long i=1;i<IT;i++){ if(MODE&1) memset(src,(int)i,N*64); barrier(0,2*i); barrier(0,2*i+1); t0s[i]=__rdtsc();
   if(N>1){ size_t len=(N-1)*64; unsigned char*dp=more[i&3];
     if(MODE&8){ for(size_t o=0;o<len;o+=64) __builtin_prefetch(dp+o,1,3); }
     if(MODE&16){ for(size_t o=0;o<len;o+=256){ size_t k=len-o<256?len-o:256; memcpy(dp+o,src+o,k);} } else memcpy(dp,src,len); } atomic_store_explicit(&flag[(i&3)*8],i,memory_order_release); }
  pthread_join(t,0); static long d[IT]; for(int i=1;i<IT;i++) d[i-1]=(long)(t1s[i]-t0s[i]); qsort(d,IT-1,sizeof(long),cmp);
  printf("%d:%.0f ",N,d[(IT-1)/2]/2.596); fflush(stdout);} printf("\n"); }
