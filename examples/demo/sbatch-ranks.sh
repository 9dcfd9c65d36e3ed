#!/bin/bash
#SBATCH --job-name=slurm-ranks
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=2
#SBATCH --gres=gpu:h100:2
#SBATCH --cpus-per-task=4
#SBATCH --time=30
#SBATCH --mail-type=END          # reported at import: use a GryviaJobHook instead

echo "setup on $(hostname): $SLURM_NNODES nodes, $SLURM_NTASKS tasks"
srun python3 -c 'import os; print("task", os.environ["SLURM_PROCID"], "on node", os.environ["SLURM_NODEID"])'
echo "first node: $(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)"
sleep 1200
