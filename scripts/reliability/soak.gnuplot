# Plots the soak run's CSV (reliability-soak): latency and RSS over time.
# gnuplot -e "csv='…'; png='…'" soak.gnuplot
set datafile separator ','
set terminal png size 1100,700 font ',10'
set output png
set multiplot layout 2,1 title 'Soak: 64 connections on engine B (demo data) while the graph-data keeps changing'
set key top left
set grid
set xlabel 'minutes'
set ylabel 'latency (ms)'
plot csv using ($1/60):3 skip 1 with lines lw 2 title 'p50', \
     csv using ($1/60):4 skip 1 with lines lw 2 title 'p99'
set ylabel 'RSS (MiB)'
plot csv using ($1/60):7 skip 1 with lines lw 2 title 'graph-builder', \
     csv using ($1/60):8 skip 1 with lines lw 2 title 'engine A', \
     csv using ($1/60):9 skip 1 with lines lw 2 title 'engine B'
unset multiplot
