#!/bin/sh -l
#SBATCH -J hvd-bench
#SBATCH -N 2
#SBATCH --tasks-per-node=4           # ranks per node
#SBATCH -c 2
#SBATCH --gpus-per-node 4
#SBATCH --mem-per-cpu=6G
#SBATCH -t 45
#SBATCH --mail-type=END              # reported: use a GryviaJobHook

echo "ranks: $SLURM_NTASKS"
srun python hvd_benchmark.py --batch-size 128
