pre=$1; bins=$2; pairs=$3; np=$4; shift 4
for i in $(seq 1 $pairs); do for b in $bins; do
 timeout 600 mpirun.mpich -np $np ./$b bench --herald inproc "$@" --json > $pre-$b-$i.json 2>&1
done; done
