# usage: ab.sh OUTPREFIX "binA binB" pairs extra-args...
pre=$1; bins=$2; pairs=$3; shift 3
for i in $(seq 1 $pairs); do for b in $bins; do
 mpirun.mpich -np 2 ./$b bench --herald inproc "$@" --json > $pre-$b-$i.json 2>&1
done; done
